/**
 * The cluster's logical clock and the gossip fields every replica-set member and router adds to its
 * replies. One child process hosts one cluster, so one clock serves every process of it (a real
 * cluster's members converge on the same cluster time by gossiping it).
 *
 * Shapes from the manual (Read Isolation / causal consistency; the `hello` and command-reply pages):
 * `$clusterTime: {clusterTime: Timestamp, signature: {hash: BinData(0, 20 bytes), keyId: Long}}` and
 * `operationTime: Timestamp`. Not modelled: signing — the hash is 20 zero bytes and keyId 0, what a
 * member without keyFile/auth sends; drivers echo it without checking.
 */
import {Binary, Long, Timestamp, type Document} from 'bson'

export class LogicalClock {
  private seconds = 0
  private increment = 0

  /** The next cluster time: a write's optime (strictly increasing). */
  tick(): Timestamp {
    const now = Math.floor(Date.now() / 1000)
    if (now > this.seconds) {
      this.seconds = now
      this.increment = 1
    } else {
      this.increment++
    }
    return new Timestamp({t: this.seconds, i: this.increment})
  }

  /** The latest cluster time handed out (ticking once if none was). */
  now(): Timestamp {
    return this.seconds === 0 ? this.tick() : new Timestamp({t: this.seconds, i: this.increment})
  }
}

export const clusterClock = new LogicalClock()

const ZERO_HASH = new Binary(Buffer.alloc(20), 0)

/** `$clusterTime` and `operationTime` appended to a reply (after `ok`, as servers write them). */
export function withClusterTime(reply: Document): Document {
  const time = clusterClock.now()
  return {...reply, $clusterTime: {clusterTime: time, signature: {hash: ZERO_HASH, keyId: Long.fromNumber(0)}}, operationTime: time}
}
