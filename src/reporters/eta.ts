/**
 * Where a bench matrix stands, for the live line: time since the matrix started, and about how
 * long is left. A cell's length is known when it is bounded by time (warm-up + --duration or its
 * stages); the set-up between cells (clients, seeding, cleanup) is learnt from the cells done.
 * Bounded by --ops, a cell's length is learnt only once one has finished. Pure.
 */
export interface MatrixClock {
  /** performance.now() when the matrix started, and when the current cell did. */
  startedAt: number
  cellStartedAt: number
  /** The current cell, from 0, and how many there are. */
  index: number
  cells: number
  /** Warm-up plus measured time of one cell, when time bounds it. */
  plannedCellMs?: number
}

/** "1:05", "12:00:07" for an hour or more. */
export function clockDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000))
  const hours = Math.floor(total / 3600)
  const minutes = Math.floor((total % 3600) / 60)
  const seconds = String(total % 60).padStart(2, '0')
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`
}

/** Milliseconds left, or undefined when nothing yet tells how long a cell takes. */
export function matrixRemainingMs(clock: MatrixClock, now: number): number | undefined {
  const inCell = now - clock.cellStartedAt
  const done = clock.index
  // A finished cell's whole time (its set-up included) is the best guess for the next ones.
  const perCell = done > 0 ? (clock.cellStartedAt - clock.startedAt) / done : clock.plannedCellMs
  if (perCell === undefined) return undefined
  const thisCell = clock.plannedCellMs ?? perCell
  return Math.max(0, thisCell - inCell) + (clock.cells - clock.index - 1) * perCell
}

/** "matrix 0:42, about 1:33 left" (or just the elapsed time while the rest is unknown). */
export function matrixProgress(clock: MatrixClock, now: number): string {
  const elapsed = `matrix ${clockDuration(now - clock.startedAt)}`
  const left = matrixRemainingMs(clock, now)
  return left === undefined ? elapsed : `${elapsed}, about ${clockDuration(left)} left`
}
