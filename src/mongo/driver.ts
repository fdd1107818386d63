/**
 * The only file in pooltool that imports the official driver. Everything else
 * goes through here, so a driver upgrade (or a second driver for old servers,
 * see mongodb-server-facts.md §6: 7.x cannot talk to servers below 4.2) has
 * one place to land.
 */
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
} from 'mongodb'
