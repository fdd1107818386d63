/**
 * The server's auth counters (serverStatus.security.authentication.mechanisms)
 * turned into exact per-mechanism deltas. The counters are per mechanism and
 * host-wide, so they are read after every block of connections: a block holds
 * at most one connection kind per counter, so each delta belongs to exactly one
 * MechanismState, and whatever else moved was another client on the host.
 */
import type {ServerReader} from '../probes/reader.js'
import type {MechanismState} from './mechanism-state.js'
import {unlessAborted} from './deadline.js'
import {type CounterSnapshot, readAuthCounters} from './probe.js'

export class CounterLedger {
  /** The snapshot the next delta is taken from; undefined when the counters cannot be read (nothing is credited then). */
  private last: CounterSnapshot | undefined
  private unavailableReason: string | undefined
  private foreignCount = 0

  constructor(
    /** pooltool's authenticated probe connection (its own login happened before the baseline). */
    private readonly reader: ServerReader,
    private readonly secrets: readonly string[],
    /** Ctrl-C: a read under way is abandoned (a stalled host would hold it for --timeout-ms), nothing more is credited. */
    private readonly signal?: AbortSignal,
  ) {}

  /** The block whose counters were never read because the run was stopped first (its connections are not credited). */
  private stoppedBeforeRead = false

  /** Said in the notes when the run stopped before the last block's counters were read. */
  get uncredited(): string | undefined {
    return this.stoppedBeforeRead ? 'stopped before the server counters were read after the last block: its connections are not in the counter figures' : undefined
  }

  private read(): Promise<{counters?: CounterSnapshot; unavailable?: string} | undefined> {
    return unlessAborted(readAuthCounters(this.reader, this.secrets), this.signal)
  }

  /** Why the counters are missing (unreadable from the start, or since a read failed during the run); undefined while they are exact. */
  get unavailable(): string | undefined {
    return this.unavailableReason
  }

  /** Counter moves no measured connection explains: other clients authenticating on the host. */
  get foreign(): number {
    return this.foreignCount
  }

  /** The first snapshot, taken once the probe connection has authenticated (its own login must not count). */
  async takeBaseline(): Promise<void> {
    const first = await this.read()
    if (!first) {
      this.unavailableReason = 'stopped before the server counters were first read'
      return
    }
    if (first.counters) this.last = first.counters
    else this.unavailableReason = first.unavailable
  }

  /**
   * Read the counters after a block and credit each mechanism's delta to the
   * block's connection of that mechanism; a block of unauthenticated (none)
   * connections is credited with every delta (it should see none). Anything
   * else moved because of other clients on the host.
   */
  async creditBlock(block: readonly MechanismState[]): Promise<void> {
    if (!this.last) return
    const now = await this.read()
    if (!now) {
      this.stoppedBeforeRead = true
      this.last = undefined
      return
    }
    if (!now.counters) {
      this.unavailableReason = `${now.unavailable} (during the run)`
      this.last = undefined
      return
    }
    const none = block.find((s) => !s.scram)
    for (const [mech, after] of Object.entries(now.counters)) {
      const before = this.last[mech] ?? {received: 0, successful: 0}
      const received = after.received - before.received
      const owner = block.find((s) => s.mechanism === mech) ?? none
      if (!owner) {
        this.foreignCount += received
        continue
      }
      owner.counters.received += received
      owner.counters.successful += after.successful - before.successful
      owner.counters.speculativeReceived += (after.speculativeReceived ?? 0) - (before.speculativeReceived ?? 0)
      owner.counters.speculativeSuccessful += (after.speculativeSuccessful ?? 0) - (before.speculativeSuccessful ?? 0)
    }
    this.last = now.counters
  }
}
