// Run by mongosh against one embedded cluster (test/cli/conformance-mongosh.test.ts):
//   mongosh URI --quiet --file checks.js, with CONFORMANCE_TOPOLOGY, CONFORMANCE_URI and, on a sharded
//   cluster, CONFORMANCE_SHARD_URI (one shard's replica set) in the environment.
// Each check prints `## <name>` and then what mongosh shows a user, so a shape mongosh cannot render
// or a helper that swallows a failed command (sh.status shows "unknown" / undefined) is in the output
// the test reads. An uncaught error ends mongosh with a non-zero exit and the error on stderr.
const env = process.env
const topology = env.CONFORMANCE_TOPOLOGY
const show = (name, value) => {
  print('## ' + name)
  if (value !== undefined) printjson(value)
}

// CRUD with explicit number types (int32, int64, double, decimal128 round trip through the server)
const c = db.getSiblingDB('conformance').c
c.drop()
show('insertMany', c.insertMany([
  {_id: 1, i: NumberInt(5), l: NumberLong('5'), d: 5.5, m: NumberDecimal('1.10')},
  {_id: 2, i: NumberInt(7)},
]))
show('updateOne', c.updateOne({_id: 1}, {$inc: {l: NumberLong('1')}}))
show('find', c.find({}).sort({_id: 1}).toArray())
show('deleteOne', c.deleteOne({_id: 2}))
show('countDocuments', c.countDocuments({}))
show('types', c.aggregate([{$project: {i: {$type: '$i'}, l: {$type: '$l'}, d: {$type: '$d'}, m: {$type: '$m'}}}]).toArray())

show('db.c.stats()', c.stats())
const status = db.serverStatus()
show('db.serverStatus()', {process: status.process, version: status.version, sections: Object.keys(status)})
const ops = db.currentOp(true)
show('db.currentOp(true)', {count: ops.inprog.length, first: ops.inprog[0]})

// Both SCRAM mechanisms: a client of its own per mechanism (the shell's own client negotiated one)
if (env.CONFORMANCE_AUTH === '1') {
  for (const mechanism of ['SCRAM-SHA-1', 'SCRAM-SHA-256']) {
    const m = Mongo(env.CONFORMANCE_URI + '&authMechanism=' + mechanism)
    const s = m.getDB('admin').runCommand({connectionStatus: 1})
    show('auth ' + mechanism, s.authInfo.authenticatedUsers)
    m.close()
  }
}

if (topology === 'sharded') {
  show('sh.shardCollection()', sh.shardCollection('conformance.s', {_id: 1}))
  db.getSiblingDB('conformance').s.insertMany([{_id: 1}, {_id: 2}, {_id: 3}])
  print('## sh.status()')
  print(sh.status())
  // rs.* through a router is refused, as on a real cluster: run them on a shard's replica set
  db = connect(env.CONFORMANCE_SHARD_URI)
}
if (topology !== 'standalone') {
  show('rs.status()', rs.status().members.map((m) => ({name: m.name, stateStr: m.stateStr, optime: m.optime})))
  print('## rs.printReplicationInfo()')
  print(rs.printReplicationInfo())
}
print('## conformance checks done')
