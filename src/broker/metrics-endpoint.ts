import type { Server } from 'bun';
import type { MetricsRegistry } from '../metrics/index.ts';

/** Prometheus scrapes GET /metrics (text format 0.0.4); anything else is a 404. */
export function serveMetrics(registry: MetricsRegistry, hostname: string, port: number): Server<undefined> {
  return Bun.serve({
    hostname,
    port,
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== '/metrics' || request.method !== 'GET') return new Response('not found: try GET /metrics\n', { status: 404 });
      return new Response(registry.renderPrometheus(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } });
    },
  });
}
