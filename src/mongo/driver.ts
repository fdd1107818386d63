/**
 * The only file in pooltool that imports the official driver. Everything else
 * goes through here, so a driver upgrade (or a second driver for old servers:
 * 7.x needs wire version 9, MongoDB 4.4, MIN_SUPPORTED_WIRE_VERSION in its
 * cmap/wire_protocol/constants.js) has
 * one place to land.
 */
// First: saslprep's stand-in must be in place before the driver requires it (see the module).
import './lazy-saslprep.js'

export {MongoClient} from 'mongodb'
export type {
  Collection,
  ConnectionCheckedInEvent,
  ConnectionCheckedOutEvent,
  ConnectionCheckOutFailedEvent,
  ConnectionCheckOutStartedEvent,
  ConnectionClosedEvent,
  ConnectionCreatedEvent,
  ConnectionPoolClearedEvent,
  ConnectionReadyEvent,
  Db,
  Document,
  MongoClientOptions,
  ServerHeartbeatFailedEvent,
} from 'mongodb'
