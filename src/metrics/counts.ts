/** Adding up counts from several sources (segments, worker threads): plain sums, never averages. */
export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0)

/** Per-key sums of count records (errors by class, connections closed by reason …); an absent record adds nothing. */
export function sumRecords(records: ReadonlyArray<Record<string, number> | undefined>): Record<string, number> {
  const total: Record<string, number> = {}
  for (const record of records) for (const [key, value] of Object.entries(record ?? {})) total[key] = (total[key] ?? 0) + value
  return total
}
