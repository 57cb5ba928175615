import { describe, expect, it } from 'vitest';
import { FrameSplitter, LiveStream } from '../../src/ci/container-step.js';

/** The container step's log plumbing without an engine: frames split across chunks, and a live stream completed from the whole log. */
describe('container step log', () => {
  const frame = (stream: number, text: string) => {
    const payload = Buffer.from(text);
    const header = Buffer.alloc(8);
    header[0] = stream;
    header.writeUInt32BE(payload.length, 4);
    return Buffer.concat([header, payload]);
  };

  it('splits frames whatever the chunks cut them into', () => {
    const log = Buffer.concat([frame(1, 'out 1\n'), frame(2, 'err 1\n'), frame(1, 'out 2\n')]);
    for (let size = 1; size <= log.length; size++) {
      const got: string[] = [];
      const splitter = new FrameSplitter((stream, payload) => got.push(`${stream}:${payload.toString()}`));
      for (let at = 0; at < log.length; at += size) splitter.push(log.subarray(at, at + size));
      expect(got, `chunks of ${size}`).toEqual(['1:out 1\n', '2:err 1\n', '1:out 2\n']);
    }
  });

  function live() {
    const emitted: string[] = [];
    const notices: string[] = [];
    const stream = new LiveStream('stdout', (chunk) => emitted.push(chunk.toString()));
    return { stream, emitted, notices, log: (message: string) => notices.push(message) };
  }

  it('completes a live stream with the rest of the whole one when the follow stopped early', () => {
    const { stream, emitted, notices, log } = live();
    stream.push(Buffer.from('a\nb'));
    stream.complete(Buffer.from('a\nb\nc\n'), log);
    expect(emitted.join('')).toBe('a\nb\nc\n');
    expect(notices).toEqual([]);
    const whole = live();
    whole.stream.complete(Buffer.from('x\n'), whole.log);
    expect(whole.emitted.join('')).toBe('x\n');
  });

  it('says so and repeats the whole stream when the follow skipped output, ending an unterminated line first', () => {
    const { stream, emitted, notices, log } = live();
    stream.push(Buffer.from('1\n2\n'));
    // 3 was skipped
    stream.push(Buffer.from('4\n5'));
    stream.complete(Buffer.from('1\n2\n3\n4\n5\n6\n'), log);
    expect(emitted.join('')).toBe('1\n2\n4\n5\n1\n2\n3\n4\n5\n6\n');
    expect(notices).toEqual(['The live log of this step missed some of its stdout; all of its stdout follows']);
  });
});
