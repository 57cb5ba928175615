/** `npm run bench`: the foundation figures (other areas have their own scripts in bench/). */
await import('./foundation.js');
