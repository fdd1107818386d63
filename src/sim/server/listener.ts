/** The TCP listener of one simulated process: accepts, enforces the connection limit. */
import {createServer, type Server, type Socket} from 'node:net'

export interface ListenerHooks {
  /** Return false to reject (the socket is then destroyed at once). */
  accept(socket: Socket): boolean
}

export class SimListener {
  private server: Server | null = null

  constructor(
    private readonly host: string,
    private readonly hooks: ListenerHooks,
  ) {}

  get listening(): boolean {
    return this.server?.listening ?? false
  }

  /** Listens; resolves with the bound port. Rejects with a clear message (e.g. port in use). */
  listen(port: number): Promise<number> {
    const server = createServer({noDelay: true}, (socket) => {
      if (!this.hooks.accept(socket)) socket.destroy()
    })
    server.maxConnections = Number.MAX_SAFE_INTEGER
    this.server = server
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        this.server = null
        const what = err.code === 'EADDRINUSE' ? 'address already in use' : err.message
        reject(new Error(`cannot listen on ${this.host}:${port}: ${what}`, {cause: err}))
      }
      server.once('error', onError)
      server.listen({host: this.host, port, backlog: 1024, exclusive: true}, () => {
        server.off('error', onError)
        server.on('error', () => {
          /* runtime accept errors (EMFILE…) are not fatal */
        })
        const addr = server.address()
        resolve(typeof addr === 'object' && addr ? addr.port : port)
      })
    })
  }

  /** Stops accepting; existing sockets are the caller's business. */
  close(): Promise<void> {
    const server = this.server
    this.server = null
    if (!server) return Promise.resolve()
    return new Promise((resolve) => server.close(() => resolve()))
  }
}
