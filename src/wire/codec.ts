/**
 * MongoDB wire-protocol framing and message codecs (no server logic).
 *
 * Shared by the embedded simulated server (src/sim) and by driver-free clients:
 * - `MessageFramer` cuts a TCP byte stream into whole messages (48 MB cap);
 * - OP_MSG (2013) encode/decode with section kinds 0 (body) and 1 (document sequence),
 *   flag bits checksumPresent (CRC stripped, not verified), moreToCome, exhaustAllowed;
 * - OP_QUERY (2004) and OP_REPLY (1), used only for the legacy first handshake.
 */
import {deserialize, serialize, type DeserializeOptions, type Document} from 'bson'

export const OP_REPLY = 1
export const OP_QUERY = 2004
export const OP_COMPRESSED = 2012
export const OP_MSG = 2013

/** mongod's maxMessageSizeBytes. */
export const MAX_MESSAGE_SIZE_BYTES = 48_000_000
export const HEADER_SIZE = 16

export const MSG_FLAG_CHECKSUM_PRESENT = 1 << 0
export const MSG_FLAG_MORE_TO_COME = 1 << 1
export const MSG_FLAG_EXHAUST_ALLOWED = 1 << 16

/** OP_REPLY responseFlags bits. */
export const REPLY_FLAG_CURSOR_NOT_FOUND = 1 << 0
export const REPLY_FLAG_QUERY_FAILURE = 1 << 1
export const REPLY_FLAG_AWAIT_CAPABLE = 1 << 3

export class WireProtocolError extends Error {
  override name = 'WireProtocolError'
}

export interface MessageHeader {
  messageLength: number
  requestID: number
  responseTo: number
  opCode: number
}

export function readHeader(message: Uint8Array): MessageHeader {
  const view = toBuffer(message)
  return {
    messageLength: view.readInt32LE(0),
    requestID: view.readInt32LE(4),
    responseTo: view.readInt32LE(8),
    opCode: view.readInt32LE(12),
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * Cuts a byte stream into complete wire messages. Each emitted Buffer holds exactly one
 * message, header included. It may share memory with the pushed chunk: decode it before
 * the next `push`, or copy it. A pushed chunk is kept until its message is whole, so its
 * memory must not be written again (a socket's 'data' chunks never are).
 *
 * The chunks of an incomplete message are kept as they came and joined once, when the last
 * one arrives: joining the bytes so far at every chunk copied a message of n chunks n times
 * over (a 2 MB getMore reply in 64 KB socket reads: ~32 copies of up to 2 MB each), which made
 * copying a quarter of the embedded cluster's CPU when a router passed 10,000 locks on.
 */
export class MessageFramer {
  /** The bytes of the incomplete message at the front, as they arrived. */
  private pending: Buffer[] = []
  private pendingBytes = 0
  /** That message's length, once its first 4 bytes are in (0 before). */
  private awaited = 0

  constructor(private readonly maxMessageSize: number = MAX_MESSAGE_SIZE_BYTES) {}

  /** Feeds bytes; calls `onMessage` for every complete message. Throws WireProtocolError on a bad length. */
  push(chunk: Buffer, onMessage: (message: Buffer) => void): void {
    let buf = chunk
    if (this.pendingBytes > 0) {
      this.pending.push(chunk)
      this.pendingBytes += chunk.length
      if (this.awaited === 0) {
        if (this.pendingBytes < 4) return
        // The length field itself came in pieces (rare): join what is here to read it.
        this.pending = [Buffer.concat(this.pending, this.pendingBytes)]
        this.awaited = this.lengthAt(this.pending[0]!, 0)
      }
      if (this.pendingBytes < this.awaited) return
      buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes)
      this.pending = []
      this.pendingBytes = 0
      this.awaited = 0
    }
    let offset = 0
    let length = 0
    while (buf.length - offset >= 4) {
      length = this.lengthAt(buf, offset)
      if (buf.length - offset < length) break
      onMessage(buf.subarray(offset, offset + length))
      offset += length
      length = 0
    }
    if (offset < buf.length) {
      // Keep only the unconsumed start of the next message (copied so the caller's chunk can be released).
      const tail = Buffer.from(buf.subarray(offset))
      this.pending = [tail]
      this.pendingBytes = tail.length
      this.awaited = length
    }
  }

  /** Bytes buffered for an incomplete message. */
  get bufferedBytes(): number {
    return this.pendingBytes
  }

  private lengthAt(buf: Buffer, offset: number): number {
    const length = buf.readInt32LE(offset)
    if (length < HEADER_SIZE || length > this.maxMessageSize) {
      throw new WireProtocolError(`invalid message length ${length} (max ${this.maxMessageSize})`)
    }
    return length
  }
}

// ---------------------------------------------------------------- request ids

let lastRequestId = 0
/** A process-wide increasing request id (wraps at 2^31). */
export function nextRequestId(): number {
  lastRequestId = (lastRequestId + 1) & 0x7fffffff
  return lastRequestId
}

// ---------------------------------------------------------------- OP_MSG

export interface DocumentSequence {
  identifier: string
  documents: Document[]
}

export interface OpMsg {
  requestID: number
  responseTo: number
  flags: number
  body: Document
  sequences: DocumentSequence[]
}

export interface OpMsgInit {
  requestID?: number
  responseTo?: number
  flags?: number
  body: Document
  sequences?: DocumentSequence[]
}

export function isMoreToCome(flags: number): boolean {
  return (flags & MSG_FLAG_MORE_TO_COME) !== 0
}

export function isExhaustAllowed(flags: number): boolean {
  return (flags & MSG_FLAG_EXHAUST_ALLOWED) !== 0
}

function readCString(buf: Buffer, offset: number): [string, number] {
  const end = buf.indexOf(0, offset)
  if (end < 0) throw new WireProtocolError('unterminated cstring')
  return [buf.toString('utf8', offset, end), end + 1]
}

export function decodeOpMsg(message: Uint8Array, options?: DeserializeOptions): OpMsg {
  const buf = toBuffer(message)
  const header = readHeader(buf)
  if (header.opCode !== OP_MSG) throw new WireProtocolError(`not an OP_MSG: opCode ${header.opCode}`)
  if (header.messageLength !== buf.length) throw new WireProtocolError('OP_MSG length mismatch')
  const flags = buf.readUInt32LE(HEADER_SIZE)
  let end = buf.length
  if ((flags & MSG_FLAG_CHECKSUM_PRESENT) !== 0) end -= 4 // CRC-32C stripped, not verified
  let offset = HEADER_SIZE + 4
  let body: Document | undefined
  const sequences: DocumentSequence[] = []
  while (offset < end) {
    const kind = buf[offset]
    offset += 1
    if (kind === 0) {
      if (body !== undefined) throw new WireProtocolError('OP_MSG has more than one body section')
      const size = buf.readInt32LE(offset)
      if (size < 5 || offset + size > end) throw new WireProtocolError('OP_MSG body overruns message')
      body = deserialize(buf.subarray(offset, offset + size), options)
      offset += size
    } else if (kind === 1) {
      const size = buf.readInt32LE(offset)
      const sectionEnd = offset + size
      if (size < 5 || sectionEnd > end) throw new WireProtocolError('OP_MSG document sequence overruns message')
      const [identifier, docsStart] = readCString(buf, offset + 4)
      const documents: Document[] = []
      let pos = docsStart
      while (pos < sectionEnd) {
        const docSize = buf.readInt32LE(pos)
        if (docSize < 5 || pos + docSize > sectionEnd) throw new WireProtocolError('OP_MSG sequence document overruns section')
        documents.push(deserialize(buf.subarray(pos, pos + docSize), options))
        pos += docSize
      }
      sequences.push({identifier, documents})
      offset = sectionEnd
    } else {
      throw new WireProtocolError(`unknown OP_MSG section kind ${kind}`)
    }
  }
  if (body === undefined) throw new WireProtocolError('OP_MSG has no body section')
  return {requestID: header.requestID, responseTo: header.responseTo, flags, body, sequences}
}

function bsonBytes(doc: Document): Buffer {
  const bytes = serialize(doc)
  return toBuffer(bytes)
}

function writeHeader(buf: Buffer, requestID: number, responseTo: number, opCode: number): void {
  buf.writeInt32LE(buf.length, 0)
  buf.writeInt32LE(requestID, 4)
  buf.writeInt32LE(responseTo, 8)
  buf.writeInt32LE(opCode, 12)
}

/** Encodes an OP_MSG; the checksum flag is never set on output. */
export function encodeOpMsg(msg: OpMsgInit): Buffer {
  const body = bsonBytes(msg.body)
  const flags = (msg.flags ?? 0) & ~MSG_FLAG_CHECKSUM_PRESENT
  let length = HEADER_SIZE + 4 + 1 + body.length
  const seqParts: {id: Buffer; docs: Buffer[]; size: number}[] = []
  for (const seq of msg.sequences ?? []) {
    const id = Buffer.from(seq.identifier + '\0', 'utf8')
    const docs = seq.documents.map(bsonBytes)
    const size = 4 + id.length + docs.reduce((n, d) => n + d.length, 0)
    seqParts.push({id, docs, size})
    length += 1 + size
  }
  const out = Buffer.allocUnsafe(length)
  writeHeader(out, msg.requestID ?? nextRequestId(), msg.responseTo ?? 0, OP_MSG)
  out.writeUInt32LE(flags >>> 0, HEADER_SIZE)
  let offset = HEADER_SIZE + 4
  out[offset++] = 0
  body.copy(out, offset)
  offset += body.length
  for (const part of seqParts) {
    out[offset++] = 1
    out.writeInt32LE(part.size, offset)
    offset += 4
    part.id.copy(out, offset)
    offset += part.id.length
    for (const d of part.docs) {
      d.copy(out, offset)
      offset += d.length
    }
  }
  return out
}

/**
 * The command a server sees: the body with every document sequence merged in as an
 * array field named by its identifier (e.g. `documents` of an insert).
 */
export function commandFromOpMsg(msg: OpMsg): Document {
  if (msg.sequences.length === 0) return msg.body
  const cmd = msg.body
  for (const seq of msg.sequences) {
    const existing = cmd[seq.identifier]
    cmd[seq.identifier] = Array.isArray(existing) ? existing.concat(seq.documents) : seq.documents
  }
  return cmd
}

// ---------------------------------------------------------------- OP_QUERY / OP_REPLY

export interface OpQuery {
  requestID: number
  responseTo: number
  flags: number
  fullCollectionName: string
  numberToSkip: number
  numberToReturn: number
  query: Document
  returnFieldsSelector?: Document
}

export function decodeOpQuery(message: Uint8Array, options?: DeserializeOptions): OpQuery {
  const buf = toBuffer(message)
  const header = readHeader(buf)
  if (header.opCode !== OP_QUERY) throw new WireProtocolError(`not an OP_QUERY: opCode ${header.opCode}`)
  const flags = buf.readInt32LE(HEADER_SIZE)
  const [fullCollectionName, afterName] = readCString(buf, HEADER_SIZE + 4)
  const numberToSkip = buf.readInt32LE(afterName)
  const numberToReturn = buf.readInt32LE(afterName + 4)
  let offset = afterName + 8
  const qSize = buf.readInt32LE(offset)
  if (qSize < 5 || offset + qSize > buf.length) throw new WireProtocolError('OP_QUERY document overruns message')
  const query = deserialize(buf.subarray(offset, offset + qSize), options)
  offset += qSize
  let returnFieldsSelector: Document | undefined
  if (offset + 5 <= buf.length) {
    const fSize = buf.readInt32LE(offset)
    returnFieldsSelector = deserialize(buf.subarray(offset, offset + fSize), options)
  }
  return {
    requestID: header.requestID,
    responseTo: header.responseTo,
    flags,
    fullCollectionName,
    numberToSkip,
    numberToReturn,
    query,
    returnFieldsSelector,
  }
}

export function encodeOpQuery(q: Partial<OpQuery> & {fullCollectionName: string; query: Document}): Buffer {
  const name = Buffer.from(q.fullCollectionName + '\0', 'utf8')
  const query = bsonBytes(q.query)
  const fields = q.returnFieldsSelector ? bsonBytes(q.returnFieldsSelector) : null
  const out = Buffer.allocUnsafe(HEADER_SIZE + 4 + name.length + 8 + query.length + (fields?.length ?? 0))
  writeHeader(out, q.requestID ?? nextRequestId(), q.responseTo ?? 0, OP_QUERY)
  let offset = HEADER_SIZE
  out.writeInt32LE(q.flags ?? 0, offset)
  offset += 4
  name.copy(out, offset)
  offset += name.length
  out.writeInt32LE(q.numberToSkip ?? 0, offset)
  out.writeInt32LE(q.numberToReturn ?? -1, offset + 4)
  offset += 8
  query.copy(out, offset)
  offset += query.length
  if (fields) fields.copy(out, offset)
  return out
}

export interface OpReply {
  requestID: number
  responseTo: number
  responseFlags: number
  cursorId: bigint
  startingFrom: number
  documents: Document[]
}

export function encodeOpReply(r: Partial<OpReply> & {responseTo: number; documents: Document[]}): Buffer {
  const docs = r.documents.map(bsonBytes)
  const out = Buffer.allocUnsafe(HEADER_SIZE + 20 + docs.reduce((n, d) => n + d.length, 0))
  writeHeader(out, r.requestID ?? nextRequestId(), r.responseTo, OP_REPLY)
  out.writeInt32LE(r.responseFlags ?? REPLY_FLAG_AWAIT_CAPABLE, HEADER_SIZE)
  out.writeBigInt64LE(r.cursorId ?? 0n, HEADER_SIZE + 4)
  out.writeInt32LE(r.startingFrom ?? 0, HEADER_SIZE + 12)
  out.writeInt32LE(docs.length, HEADER_SIZE + 16)
  let offset = HEADER_SIZE + 20
  for (const d of docs) {
    d.copy(out, offset)
    offset += d.length
  }
  return out
}

export function decodeOpReply(message: Uint8Array, options?: DeserializeOptions): OpReply {
  const buf = toBuffer(message)
  const header = readHeader(buf)
  if (header.opCode !== OP_REPLY) throw new WireProtocolError(`not an OP_REPLY: opCode ${header.opCode}`)
  const responseFlags = buf.readInt32LE(HEADER_SIZE)
  const cursorId = buf.readBigInt64LE(HEADER_SIZE + 4)
  const startingFrom = buf.readInt32LE(HEADER_SIZE + 12)
  const numberReturned = buf.readInt32LE(HEADER_SIZE + 16)
  const documents: Document[] = []
  let offset = HEADER_SIZE + 20
  for (let i = 0; i < numberReturned; i++) {
    const size = buf.readInt32LE(offset)
    if (size < 5 || offset + size > buf.length) throw new WireProtocolError('OP_REPLY document overruns message')
    documents.push(deserialize(buf.subarray(offset, offset + size), options))
    offset += size
  }
  return {requestID: header.requestID, responseTo: header.responseTo, responseFlags, cursorId, startingFrom, documents}
}
