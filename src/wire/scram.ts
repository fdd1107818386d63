/**
 * SCRAM-SHA-1 / SCRAM-SHA-256 primitives (RFC 5802, RFC 7677) with MongoDB's specifics,
 * usable by a server and by a client. No I/O: callers move the messages.
 *
 * MongoDB specifics:
 * - SCRAM-SHA-1 hashes the "MongoDB password digest" = hex(MD5("user:mongo:password"));
 * - SCRAM-SHA-256 uses the password itself after SASLprep (RFC 4013), by the same package the
 *   driver uses (@mongodb-js/saslprep), so both sides of a handshake prepare a password alike;
 * - user names are escaped in `n=` (`=` → `=3D`, `,` → `=2C`).
 */
import {createHash, createHmac, pbkdf2, pbkdf2Sync, randomBytes, timingSafeEqual} from 'node:crypto'
import {createRequire} from 'node:module'

export type ScramMechanism = 'SCRAM-SHA-1' | 'SCRAM-SHA-256'
export const SCRAM_MECHANISMS: readonly ScramMechanism[] = ['SCRAM-SHA-1', 'SCRAM-SHA-256']

/** Drivers refuse iteration counts below this (auth spec). */
export const MIN_CLIENT_ITERATION_COUNT = 4096

export function isScramMechanism(m: unknown): m is ScramMechanism {
  return m === 'SCRAM-SHA-1' || m === 'SCRAM-SHA-256'
}

export function digestAlgorithm(mech: ScramMechanism): 'sha1' | 'sha256' {
  return mech === 'SCRAM-SHA-1' ? 'sha1' : 'sha256'
}

export function keyLength(mech: ScramMechanism): number {
  return mech === 'SCRAM-SHA-1' ? 20 : 32
}

/** hex(MD5("user:mongo:password")): what SCRAM-SHA-1 hashes on MongoDB. */
export function mongoPasswordDigest(username: string, password: string): string {
  return createHash('md5').update(`${username}:mongo:${password}`, 'utf8').digest('hex')
}

type SaslPrep = (typeof import('@mongodb-js/saslprep'))['saslprep']
let saslprepFn: SaslPrep | undefined

/**
 * The package, loaded on the first SCRAM-SHA-256 password: at load it inflates its Unicode tables (zlib, ~0.1 s
 * of CPU), which an embedded cluster without auth or a command that never authenticates would pay for nothing.
 * Its CommonJS build (the one the driver loads), through require so that scramPassword stays synchronous.
 */
function saslprep(password: string): string {
  saslprepFn ??= (createRequire(import.meta.url)('@mongodb-js/saslprep') as typeof import('@mongodb-js/saslprep')).saslprep
  return saslprepFn(password)
}

/** The string fed to Hi() for a mechanism. */
export function scramPassword(mech: ScramMechanism, username: string, password: string): string {
  return mech === 'SCRAM-SHA-1' ? mongoPasswordDigest(username, password) : saslprep(password)
}

/** Hi(password, salt, i) = PBKDF2 with HMAC of the mechanism's hash. */
export function hi(mech: ScramMechanism, password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(password, salt, iterations, keyLength(mech), digestAlgorithm(mech))
}

/** Hi() on the libuv thread pool, to keep an event loop responsive. */
export function hiAsync(mech: ScramMechanism, password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, iterations, keyLength(mech), digestAlgorithm(mech), (err, key) =>
      err ? reject(err) : resolve(key),
    )
  })
}

export function hmac(mech: ScramMechanism, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(digestAlgorithm(mech), key).update(data).digest()
}

export function h(mech: ScramMechanism, data: Buffer): Buffer {
  return createHash(digestAlgorithm(mech)).update(data).digest()
}

export function xor(a: Buffer, b: Buffer): Buffer {
  if (a.length !== b.length) throw new Error('xor: length mismatch')
  const out = Buffer.allocUnsafe(a.length)
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i]
  return out
}

export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

export function generateNonce(bytes = 24): string {
  return randomBytes(bytes).toString('base64')
}

// ---------------------------------------------------------------- stored credentials

/** What a server stores per user and mechanism (base64 fields, as in admin.system.users). */
export interface ScramCredential {
  iterationCount: number
  salt: string
  storedKey: string
  serverKey: string
}

export interface ScramKeys {
  saltedPassword: Buffer
  clientKey: Buffer
  serverKey: Buffer
  storedKey: Buffer
}

export function keysFromSaltedPassword(mech: ScramMechanism, saltedPassword: Buffer): ScramKeys {
  const clientKey = hmac(mech, saltedPassword, 'Client Key')
  const serverKey = hmac(mech, saltedPassword, 'Server Key')
  return {saltedPassword, clientKey, serverKey, storedKey: h(mech, clientKey)}
}

function saltLength(mech: ScramMechanism): number {
  return mech === 'SCRAM-SHA-1' ? 16 : 28
}

function credentialFrom(mech: ScramMechanism, salt: Buffer, iterations: number, salted: Buffer): ScramCredential {
  const keys = keysFromSaltedPassword(mech, salted)
  return {
    iterationCount: iterations,
    salt: salt.toString('base64'),
    storedKey: keys.storedKey.toString('base64'),
    serverKey: keys.serverKey.toString('base64'),
  }
}

/** Derives a stored credential with real PBKDF2 (synchronously). */
export function deriveCredential(
  mech: ScramMechanism,
  username: string,
  password: string,
  iterationCount: number,
  salt: Buffer = randomBytes(saltLength(mech)),
): ScramCredential {
  return credentialFrom(mech, salt, iterationCount, hi(mech, scramPassword(mech, username, password), salt, iterationCount))
}

/** Same as `deriveCredential` with PBKDF2 off the event loop. */
export async function deriveCredentialAsync(
  mech: ScramMechanism,
  username: string,
  password: string,
  iterationCount: number,
  salt: Buffer = randomBytes(saltLength(mech)),
): Promise<ScramCredential> {
  const salted = await hiAsync(mech, scramPassword(mech, username, password), salt, iterationCount)
  return credentialFrom(mech, salt, iterationCount, salted)
}

// ---------------------------------------------------------------- message syntax

/** Escapes a SASL name for `n=` (RFC 5802 §5.1). */
export function escapeUsername(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C')
}

export function unescapeUsername(name: string): string {
  if (/=(?!2C|3D)/.test(name)) throw new ScramError('invalid escape in user name')
  return name.replace(/=2C/g, ',').replace(/=3D/g, '=')
}

export class ScramError extends Error {
  override name = 'ScramError'
}

/** Parses `k=v,k=v` attributes (values may contain '='). */
export function parseAttributes(message: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of message.split(',')) {
    if (part.length < 2 || part[1] !== '=') throw new ScramError(`malformed SCRAM attribute '${part}'`)
    out.set(part[0], part.slice(2))
  }
  return out
}

export interface ClientFirst {
  gs2Header: string
  bare: string
  username: string
  nonce: string
}

export function buildClientFirst(username: string, nonce: string): {message: string; bare: string} {
  const bare = `n=${escapeUsername(username)},r=${nonce}`
  return {message: `n,,${bare}`, bare}
}

export function parseClientFirst(message: string): ClientFirst {
  // gs2-header = gs2-cbind-flag "," [ authzid ] ","
  const first = message.indexOf(',')
  const second = first < 0 ? -1 : message.indexOf(',', first + 1)
  if (first < 0 || second < 0) throw new ScramError('malformed client-first message')
  const flag = message.slice(0, first)
  if (flag !== 'n' && flag !== 'y') throw new ScramError('channel binding is not supported')
  const gs2Header = message.slice(0, second + 1)
  const bare = message.slice(second + 1)
  const attrs = parseAttributes(bare)
  const n = attrs.get('n')
  const r = attrs.get('r')
  if (n === undefined || r === undefined || r.length === 0) throw new ScramError('client-first message lacks n= or r=')
  return {gs2Header, bare, username: unescapeUsername(n), nonce: r}
}

export interface ServerFirst {
  nonce: string
  salt: Buffer
  iterationCount: number
}

export function buildServerFirst(nonce: string, saltBase64: string, iterationCount: number): string {
  return `r=${nonce},s=${saltBase64},i=${iterationCount}`
}

export function parseServerFirst(message: string): ServerFirst {
  const attrs = parseAttributes(message)
  const r = attrs.get('r')
  const s = attrs.get('s')
  const i = Number(attrs.get('i'))
  if (!r || !s || !Number.isInteger(i)) throw new ScramError('malformed server-first message')
  return {nonce: r, salt: Buffer.from(s, 'base64'), iterationCount: i}
}

export interface ClientFinal {
  channelBinding: string
  nonce: string
  proof: Buffer
  withoutProof: string
}

export function parseClientFinal(message: string): ClientFinal {
  const idx = message.lastIndexOf(',p=')
  if (idx < 0) throw new ScramError('client-final message lacks a proof')
  const withoutProof = message.slice(0, idx)
  const attrs = parseAttributes(withoutProof)
  const c = attrs.get('c')
  const r = attrs.get('r')
  if (c === undefined || r === undefined) throw new ScramError('malformed client-final message')
  return {channelBinding: c, nonce: r, proof: Buffer.from(message.slice(idx + 3), 'base64'), withoutProof}
}

export function authMessage(clientFirstBare: string, serverFirst: string, clientFinalWithoutProof: string): string {
  return `${clientFirstBare},${serverFirst},${clientFinalWithoutProof}`
}

/** Server side: checks a client proof against the stored key; returns the server signature when valid. */
export function verifyClientProof(
  mech: ScramMechanism,
  credential: ScramCredential,
  authMsg: string,
  proof: Buffer,
): Buffer | null {
  const storedKey = Buffer.from(credential.storedKey, 'base64')
  const clientSignature = hmac(mech, storedKey, authMsg)
  if (proof.length !== clientSignature.length) return null
  const clientKey = xor(proof, clientSignature)
  if (!safeEqual(h(mech, clientKey), storedKey)) return null
  return hmac(mech, Buffer.from(credential.serverKey, 'base64'), authMsg)
}

export function buildServerFinal(serverSignature: Buffer): string {
  return `v=${serverSignature.toString('base64')}`
}

export function parseServerFinal(message: string): {verifier?: Buffer; error?: string} {
  const attrs = parseAttributes(message)
  const e = attrs.get('e')
  if (e !== undefined) return {error: e}
  const v = attrs.get('v')
  if (v === undefined) throw new ScramError('malformed server-final message')
  return {verifier: Buffer.from(v, 'base64')}
}

// ---------------------------------------------------------------- client conversation

/**
 * A client conversation: `first()` → send; `final(serverFirst)` → send; `verify(serverFinal)`.
 * Derives keys with real PBKDF2 at the server's iteration count (optionally cached by caller).
 */
export class ScramClient {
  readonly nonce: string
  private bare = ''
  private serverSignature: Buffer | null = null
  /** Set after `final()`: what the server announced. */
  serverFirst: ServerFirst | null = null

  constructor(
    readonly mechanism: ScramMechanism,
    readonly username: string,
    private readonly password: string,
    nonce: string = generateNonce(),
  ) {
    this.nonce = nonce
  }

  first(): string {
    const {message, bare} = buildClientFirst(this.username, this.nonce)
    this.bare = bare
    return message
  }

  /** Builds the client-final message; `saltedPassword` lets callers skip PBKDF2 (cache). */
  final(serverFirstMessage: string, saltedPassword?: Buffer): string {
    const sf = parseServerFirst(serverFirstMessage)
    if (!sf.nonce.startsWith(this.nonce) || sf.nonce.length <= this.nonce.length) {
      throw new ScramError('server nonce does not extend the client nonce')
    }
    if (sf.iterationCount < MIN_CLIENT_ITERATION_COUNT) {
      throw new ScramError(`server iteration count ${sf.iterationCount} is below ${MIN_CLIENT_ITERATION_COUNT}`)
    }
    this.serverFirst = sf
    const salted =
      saltedPassword ??
      hi(this.mechanism, scramPassword(this.mechanism, this.username, this.password), sf.salt, sf.iterationCount)
    const keys = keysFromSaltedPassword(this.mechanism, salted)
    const withoutProof = `c=biws,r=${sf.nonce}`
    const msg = authMessage(this.bare, serverFirstMessage, withoutProof)
    const clientSignature = hmac(this.mechanism, keys.storedKey, msg)
    this.serverSignature = hmac(this.mechanism, keys.serverKey, msg)
    return `${withoutProof},p=${xor(keys.clientKey, clientSignature).toString('base64')}`
  }

  /** True when the server proved it knows the password. */
  verify(serverFinalMessage: string): boolean {
    const parsed = parseServerFinal(serverFinalMessage)
    if (!parsed.verifier || !this.serverSignature) return false
    return safeEqual(parsed.verifier, this.serverSignature)
  }
}
