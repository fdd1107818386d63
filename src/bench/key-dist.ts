/**
 * Which seeded document find and update pick (`--key-dist`), as YCSB's request distributions do
 * (core/src/main/java/site/ycsb/generator/{Zipfian,ScrambledZipfian,SkewedLatest}Generator.java):
 * - uniform: every seeded id equally often;
 * - zipfian: a few ids take most of the operations (Zipf, constant 0.99: with 1,000 ids the most
 *   popular one gets about 13 %), scattered over the id range by a hash as YCSB's default
 *   "zipfian" does, so the popular ids are not all neighbours in the index;
 * - latest: the same skew, the most popular ids being the last seeded (YCSB's skewed-latest over
 *   the seeded ids; documents inserted during the run have ObjectIds and are not drawn).
 * Draws are reproducible: they come from the workload's seeded PRNG.
 */
export const KEY_DISTRIBUTIONS = ['uniform', 'zipfian', 'latest'] as const
export type KeyDistribution = (typeof KEY_DISTRIBUTIONS)[number]

/** YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT. */
export const ZIPFIAN_CONSTANT = 0.99

/** A key in [0, count) for each call. */
export type KeyPicker = () => number

export function createKeyPicker(distribution: KeyDistribution, count: number, random: () => number): KeyPicker {
  switch (distribution) {
    case 'uniform':
      return () => Math.floor(random() * count)
    case 'zipfian': {
      const rank = zipfianRanks(count, random)
      return () => scramble(rank(), count)
    }
    case 'latest': {
      const rank = zipfianRanks(count, random)
      return () => count - 1 - rank()
    }
  }
}

/**
 * Zipf-distributed ranks in [0, count), rank 0 the most frequent: the rejection-free method of
 * Gray et al., "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994), which YCSB uses.
 * zeta(count) is summed once, O(count): 10 million ids take well under a second.
 */
function zipfianRanks(count: number, random: () => number): () => number {
  const theta = ZIPFIAN_CONSTANT
  let zetaN = 0
  for (let i = 1; i <= count; i++) zetaN += 1 / i ** theta
  const zeta2 = 1 + 1 / 2 ** theta
  const alpha = 1 / (1 - theta)
  const eta = (1 - (2 / count) ** (1 - theta)) / (1 - zeta2 / zetaN)
  const halfPowTheta = 1 + 0.5 ** theta
  return () => {
    const u = random()
    const uz = u * zetaN
    if (uz < 1 || count === 1) return 0
    if (uz < halfPowTheta) return 1
    return Math.min(count - 1, Math.floor(count * (eta * u - eta + 1) ** alpha))
  }
}

/** FNV-1a of the rank's 32-bit value, modulo the id count: YCSB's scrambling, so rank 0 lands anywhere. */
function scramble(rank: number, count: number): number {
  let hash = 0x811c9dc5
  for (let shift = 0; shift < 32; shift += 8) {
    hash ^= (rank >>> shift) & 0xff
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash % count
}
