/**
 * pooltool's import rules, checked by `npm run lint:imports` (test/check-imports.mjs) before the tests run.
 *
 * 1. One door per part: src/sim (the embedded cluster) and src/wire (our own wire-protocol client) are
 *    reached from outside only through their index.ts. Unit tests (test/unit) may import a part's insides:
 *    they test those insides. Everything else — src/, commands/, bin/ and the other test tiers, which use a
 *    part as its users do — goes through the door.
 * 2. Layers: a file imports only from its own layer or the layers below it, never upward. Every file
 *    under src/ belongs to exactly one layer (the rule `every-src-file-has-a-layer` says when one does not).
 * 3. No circular imports (type-only imports count: a circle of types is still two files that cannot be
 *    read apart), except the one named below.
 */

/**
 * The layers, from the top down. What each holds, and why it sits where it does:
 * - entry: the oclif commands (thin classes) and the library's own front door (src/index.ts).
 * - cli: flags, the base command, failures and exit codes, help, stop signals.
 * - presentation: reporters (text, tables, JSON lines, HTML) and report (reading, merging, comparing
 *   result files, the HTML reports' data). One layer: the HTML renderers take report's data shapes, and
 *   report's watch pages reuse the reporters' clock and wording.
 * - features: what a command does — bench, conns, locks, auth, snapshot, replay (serving a snapshot
 *   back), run-sim.ts (running the embedded cluster in the foreground) and parse (the parsers of the
 *   features' own flag values: fault specs, lock filters, durations).
 * - target: where a command connects (target.ts: a URI, or an embedded cluster it starts) and the
 *   result envelope that names it (result.ts).
 * - readers: probes (reading servers through a CommandChannel: discovery, serverStatus, topology) and
 *   sim (the embedded cluster; target.ts starts it, nothing in it reads through probes).
 * - transport: mongo (the only module that imports the driver, its clients, errors and pool telemetry)
 *   and wire (our driver-free client and codec, which the embedded cluster and auth speak).
 * - base: metrics (histograms, counts, number formats), errors and exit codes, defaults, redaction,
 *   reading input files and writing output files atomically.
 */
const LAYERS = [
  {name: 'entry', path: ['^commands/', '^src/index\\.ts$']},
  {name: 'cli', path: ['^src/cli/']},
  {name: 'presentation', path: ['^src/reporters/', '^src/report/']},
  {name: 'features', path: ['^src/(bench|conns|locks|auth|snapshot|replay|parse)/', '^src/run-sim\\.ts$']},
  {name: 'target', path: ['^src/(target|result)\\.ts$']},
  {name: 'readers', path: ['^src/(probes|sim)/']},
  {name: 'transport', path: ['^src/(mongo|wire)/']},
  {name: 'base', path: ['^src/metrics/', '^src/(errors|defaults|redact|input|output)\\.ts$']},
]

const upwardRules = LAYERS.slice(1).map((layer, index) => ({
  name: `no-upward-import-from-${layer.name}`,
  comment: `${layer.name} imports from a layer above it (${LAYERS.slice(0, index + 1).map((l) => l.name).join(', ')}): move the imported thing down, next to what it serves`,
  severity: 'error',
  from: {path: layer.path},
  to: {path: LAYERS.slice(0, index + 1).flatMap((l) => l.path)},
}))

/**
 * The one circle left, named so that it is not silently accepted: the embedded cluster's server core.
 * A SimProcess owns its client connections and lock manager; a connection dispatches each message
 * through the command registry; a command's context hands it the process and the connection; the
 * secondary-ok check, currentOp's lock and system-op views and the lock manager look back at the
 * process. Most of its arrows are type-only; cutting it means giving commands an interface of the
 * process instead of the class (a change inside src/sim of its own). Any other circle fails.
 */
const SIM_SERVER_RING = [
  '^src/sim/process\\.ts$',
  '^src/sim/commands/(registry|util)\\.ts$',
  '^src/sim/repl/secondary-ok\\.ts$',
  '^src/sim/server/(connection|dispatch)\\.ts$',
  '^src/sim/status/(op-locks|system-ops)\\.ts$',
  '^src/sim/storage/locks\\.ts$',
]

/** A part with one door: its insides are reachable from outside only through `index.ts`. */
const door = (part) => ({
  name: `one-door-${part}`,
  comment: `src/${part} is reached from outside only through src/${part}/index.ts (unit tests excepted)`,
  severity: 'error',
  from: {path: '^(src|commands|bin|test)/', pathNot: [`^src/${part}/`, '^test/unit/']},
  to: {path: `^src/${part}/`, pathNot: `^src/${part}/index\\.ts$`},
})

module.exports = {
  forbidden: [
    door('sim'),
    door('wire'),
    ...upwardRules,
    {
      name: 'every-src-file-has-a-layer',
      comment: 'a file under src/ that no layer names: add its folder to LAYERS in .dependency-cruiser.cjs',
      severity: 'error',
      from: {path: '^src/', pathNot: LAYERS.flatMap((l) => l.path)},
      to: {},
    },
    {
      name: 'no-unresolvable-import',
      comment: 'an import the checker cannot resolve: it could hide a broken rule, so it is one',
      severity: 'error',
      from: {},
      to: {couldNotResolve: true},
    },
    {
      name: 'no-circular',
      comment: 'a circle of imports: cut it by moving the shared type or helper next to what it serves',
      severity: 'error',
      from: {},
      // Cycles wholly inside SIM_SERVER_RING are let be (see there); one that leaves it is caught.
      to: {circular: true, via: {pathNot: SIM_SERVER_RING.join('|')}},
    },
  ],
  options: {
    doNotFollow: {path: 'node_modules'},
    exclude: {path: ['node_modules', '^dist/', '^test/fixtures/']},
    // Type-only imports count: an upward `import type` still ties a lower file to a higher one.
    tsPreCompilationDeps: true,
    tsConfig: {fileName: 'tsconfig.json'},
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
}
