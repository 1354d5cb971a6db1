import type { Server } from 'bun';
import type { MetricsRegistry } from '../metrics/index.ts';
import { registerProcessMetrics } from '../metrics/process.ts';
import { stageTimers } from '../metrics/stage-timers.ts';
import type { Clock } from '../util/clock.ts';

/** The scrape endpoint: its port, and what stops it and the process metrics it started. */
export interface MetricsEndpoint {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Prometheus scrapes GET /metrics (text format 0.0.4); anything else is a 404. The process's
 * CPU, memory and event-loop delay are measured only here, where someone scrapes them (an
 * embedded engine or the simulation, which serve no endpoint, run no loop probe).
 */
export function serveMetrics(registry: MetricsRegistry, hostname: string, port: number, clock: Clock): MetricsEndpoint {
  const server: Server<undefined> = Bun.serve({
    hostname,
    port,
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== '/metrics' || request.method !== 'GET') return new Response('not found: try GET /metrics\n', { status: 404 });
      return new Response(registry.renderPrometheus(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } });
    },
  });
  const stopProcessMetrics = registerProcessMetrics(registry, clock);
  stageTimers.register(registry); // bench only: nothing unless FERRY_STAGE_TIMERS=1
  return {
    port: server.port ?? port,
    stop: async () => {
      stopProcessMetrics();
      await server.stop(true);
    },
  };
}
