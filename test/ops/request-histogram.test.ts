import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestHistogram } from '../../src/ops/metrics.js';

describe('request histogram', () => {
  it('writes cumulative buckets, +Inf, sum and count per series, and the counter from the same counts', async () => {
    const requests = new RequestHistogram([0.01, 0.1, 1]);
    const registry = new client.Registry();
    registry.registerMetric(requests.histogram('t_duration_seconds', 'Latency'));
    registry.registerMetric(requests.counter('t_requests_total', 'Requests'));
    requests.observe('GET', '/a/:id', 200, 0.005);
    requests.observe('GET', '/a/:id', 200, 0.01);
    requests.observe('GET', '/a/:id', 200, 0.5);
    requests.observe('GET', '/a/:id', 200, 3);
    requests.observe('POST', '/a', 400, 0.05);
    const text = await registry.metrics();
    const series = 'method="GET",route="/a/:id",status="200"';
    expect(text).toContain('# TYPE t_duration_seconds histogram');
    expect(text).toContain(`t_duration_seconds_bucket{le="0.01",${series}} 2`);
    expect(text).toContain(`t_duration_seconds_bucket{le="0.1",${series}} 2`);
    expect(text).toContain(`t_duration_seconds_bucket{le="1",${series}} 3`);
    expect(text).toContain(`t_duration_seconds_bucket{le="+Inf",${series}} 4`);
    expect(text).toContain(`t_duration_seconds_sum{${series}} 3.515`);
    expect(text).toContain(`t_duration_seconds_count{${series}} 4`);
    expect(text).toContain('t_duration_seconds_bucket{le="0.01",method="POST",route="/a",status="400"} 0');
    expect(text).toContain('t_duration_seconds_bucket{le="0.1",method="POST",route="/a",status="400"} 1');
    expect(text).toContain('# TYPE t_requests_total counter');
    expect(text).toContain(`t_requests_total{${series}} 4`);
    expect(text).toContain('t_requests_total{method="POST",route="/a",status="400"} 1');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('t_requests_total{');
  });
});
