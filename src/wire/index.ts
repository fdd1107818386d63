/**
 * pooltool's own wire-protocol client, as one door: the message codec (OP_MSG, OP_QUERY, OP_REPLY), SCRAM
 * (both sides: auth's driver-free client and the embedded cluster's server) and the connection. Everything
 * outside src/wire imports from here; `.dependency-cruiser.cjs` (rule one-door-wire) keeps it so.
 */
export * from './codec.js'
export * from './scram.js'
export * from './client.js'
