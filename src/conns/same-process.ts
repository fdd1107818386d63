/**
 * One row per process. A cluster can name one process twice: the entry router
 * from the URI (`localhost:27017`) and from `config.mongos`
 * (`mongos1.example.net:27017`), or seeds written as `localhost` and
 * `127.0.0.1`. Each name gets its own poller at first; once two of them answer
 * with the same process identity (`serverStatus.host`, with `pid` when sent),
 * one row is kept (the entry node's, else the one discovery listed first) and
 * the other name becomes its alias.
 */

export interface ProcessAnswer {
  /** Index of the host in the discovered topology. */
  index: number
  /** `serverStatus.host` (and pid): who answered. */
  processKey: string
  /** The node the URI reached: its row is the one kept. */
  entry: boolean
}

export interface Merge {
  /** The row that goes on. */
  kept: number
  /** The row that stops: the same process under another name. */
  alias: number
}

/** "host#pid": the same process answers the same through every address. */
export function processKey(serverHost: string | undefined, pid: number | undefined): string | undefined {
  if (serverHost === undefined) return undefined
  return pid === undefined ? serverHost : `${serverHost}#${pid}`
}

export class SameProcess {
  /** processKey → the row kept for it. */
  private readonly owner = new Map<string, {index: number; entry: boolean}>()

  /** The merges this round's answers call for (each alias row stops once). */
  merge(answers: readonly ProcessAnswer[]): Merge[] {
    const merges: Merge[] = []
    const better = (a: {index: number; entry: boolean}, b: {index: number; entry: boolean}) => (a.entry !== b.entry ? a.entry : a.index < b.index)
    for (const answer of answers) {
      const owner = this.owner.get(answer.processKey)
      if (!owner) {
        this.owner.set(answer.processKey, {index: answer.index, entry: answer.entry})
        continue
      }
      if (owner.index === answer.index) continue
      if (better(answer, owner)) {
        merges.push({kept: answer.index, alias: owner.index})
        this.owner.set(answer.processKey, {index: answer.index, entry: answer.entry})
      } else {
        merges.push({kept: owner.index, alias: answer.index})
      }
    }
    return merges
  }
}
