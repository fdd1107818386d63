/**
 * mulberry32: a small, fast, seedable pseudo-random generator. Not for
 * secrets; ample for picking keys and documents (reproducible bench runs, no
 * Math.random contention) and for resampling indices in a bootstrap (the same
 * inputs give the same interval).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
