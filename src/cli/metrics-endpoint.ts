/**
 * The HTTP endpoint of `--metrics-port`: serves the last published round on
 * `GET /metrics` (OpenMetrics to a scraper that asks for it, the Prometheus
 * 0.0.4 text format otherwise). A round is rendered to text once, off the
 * request path, then swapped in whole: a scrape never waits for a poll and
 * never sees half a round. Bound to 127.0.0.1 unless the user names another
 * address. `close` frees the port at once, open keep-alive scrapes included.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {PoolToolError, usageError} from '../errors.js'
import {type Exposition, formatForAccept, type MetricFamily, renderExposition} from '../reporters/openmetrics/families.js'

interface Published {
  prometheus: Exposition
  openmetrics: Exposition
}

export class MetricsEndpoint {
  private published: Published | undefined

  private constructor(
    private readonly server: Server,
    /** Where it listens, e.g. `http://127.0.0.1:9216/metrics`. */
    readonly url: string,
  ) {}

  /** Listen on host:port (0: any free port); a port in use or an address not of this machine is a usage error. */
  static async start(host: string, port: number): Promise<MetricsEndpoint> {
    let endpoint: MetricsEndpoint | undefined
    const server = createServer((request, response) => endpoint?.handle(request, response))
    // A scraper that keeps its connection open must not hold the watch's exit.
    server.keepAliveTimeout = 5000
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)))
      server.listen({host, port}, () => resolve())
    })
    const address = server.address() as AddressInfo
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
    endpoint = new MetricsEndpoint(server, `http://${shownHost}:${address.port}/metrics`)
    return endpoint
  }

  /** Render `families` in both formats, then make them what scrapes get. Callers publish one round at a time, in order (MetricsExport chains them). */
  async publish(families: readonly MetricFamily[]): Promise<void> {
    const [prometheus, openmetrics] = await Promise.all([renderExposition(families, 'prometheus'), renderExposition(families, 'openmetrics')])
    this.published = {prometheus, openmetrics}
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const path = (request.url ?? '/').split('?')[0]
    if (path !== '/metrics') {
      response.writeHead(404, {'content-type': 'text/plain; charset=utf-8'}).end('pooltool serves its metrics on /metrics\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, {allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8'}).end('GET /metrics\n')
      return
    }
    const published = this.published
    if (!published) {
      // Only between listen and the first publish, which follows at once.
      response.writeHead(503, {'content-type': 'text/plain; charset=utf-8', 'retry-after': '1'}).end('the first round is not in yet\n')
      return
    }
    const exposition = published[formatForAccept(request.headers.accept)]
    response.writeHead(200, {'content-type': exposition.contentType, 'cache-control': 'no-store'})
    response.end(request.method === 'HEAD' ? undefined : exposition.text)
  }
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): PoolToolError {
  if (error.code === 'EADDRINUSE') return usageError(`--metrics-port ${port}: the port is in use on ${host}`, 'choose another port, or --metrics-port 0 for any free one (its address is printed)')
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return usageError(`--metrics-host ${host}: not an address of this machine`, 'use 127.0.0.1 (the default), 0.0.0.0 for every interface, or one of this machine\'s addresses')
  if (error.code === 'EACCES') return usageError(`--metrics-port ${port}: not allowed to listen on it`, 'ports below 1024 need privileges; the usual ports are 9216 (conns watch) and 9217 (locks watch)')
  return usageError(`--metrics-port ${port}: cannot listen on ${host}: ${error.message}`, 'choose another --metrics-host or --metrics-port')
}
