/** Server errors with mongod's `{ok: 0, errmsg, code, codeName}` shape. */
import type {Document} from 'bson'

export const ErrorCodes = {
  InternalError: 1,
  BadValue: 2,
  FailedToParse: 9,
  UserNotFound: 11,
  Unauthorized: 13,
  TypeMismatch: 14,
  AuthenticationFailed: 18,
  IllegalOperation: 20,
  PathNotViable: 28,
  ConflictingUpdateOperators: 40,
  NoSuchKey: 4,
  Location31254: 31254,
  Location15952: 15952,
  Location15955: 15955,
  Location40353: 40353,
  Location16410: 16410,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  RoleNotFound: 31,
  CursorNotFound: 43,
  MaxTimeMSExpired: 50,
  NamespaceExists: 48,
  CommandNotFound: 59,
  ImmutableField: 66,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  NoReplicationEnabled: 76,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  MechanismUnavailable: 334,
  ProtocolError: 17,
  UnsupportedOpQueryCommand: 352,
  ClientMetadataCannotBeMutated: 186,
  Interrupted: 11601,
  NotWritablePrimary: 10107,
  NotPrimaryNoSecondaryOk: 13435,
  NotPrimaryOrSecondary: 13436,
  DuplicateKey: 11000,
  Location51003: 51003,
  InvalidPipelineOperator: 168,
  Location40324: 40324,
  HostUnreachable: 6,
  LockBusy: 46,
  ShardNotFound: 70,
  ConflictingOperationInProgress: 117,
  LockStateChangeFailed: 129,
} as const

export type ErrorCodeName = keyof typeof ErrorCodes

const names = new Map<number, string>(Object.entries(ErrorCodes).map(([k, v]) => [v, k]))

export function codeName(code: number): string {
  return names.get(code) ?? `Location${code}`
}

export class CommandError extends Error {
  override name = 'CommandError'
  constructor(
    readonly code: number,
    message: string,
    readonly extra?: Document,
  ) {
    super(message)
  }

  static of(name: ErrorCodeName, message: string, extra?: Document): CommandError {
    return new CommandError(ErrorCodes[name], message, extra)
  }

  toDocument(): Document {
    return {ok: 0, errmsg: this.message, code: this.code, codeName: codeName(this.code), ...this.extra}
  }
}

export function errorDocument(err: unknown): Document {
  if (err instanceof CommandError) return err.toDocument()
  const message = err instanceof Error ? err.message : String(err)
  return {ok: 0, errmsg: message, code: ErrorCodes.InternalError, codeName: 'InternalError'}
}
