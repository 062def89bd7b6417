// nodiak 0.4.4 against Cairn (--dialect riak). Every Riak operation below is an
// unmodified nodiak call; the script only checks what nodiak hands back.
//
// nodiak talks to the new URL form (/buckets/B/keys/K, /buckets/B/props), sends
// Accept: */* and picks its body decoder by the exact response Content-Type, so it also
// needs a Content-Type on bodiless 204 responses.
'use strict';

const http = require('http');
const { step, ok, eq, noErr, skip, call, run, target } = require('./lib/check');

run('nodiak', async () => {
  const { host, port } = target();
  const nodiak = require('nodiak');
  const riak = nodiak.getClient('http', host, port);

  step('connection pool');
  // nodiak builds its connection pool from agentkeepalive 0.2.2, whose createSocket
  // override predates the callback that Node >= 0.11 passes to Agent#createSocket, so
  // the first request throws "cb is not a function" inside http.request. That is
  // nodiak's dependency failing on modern Node, not the server: the client's `agent`
  // instance is swapped for Node's own keep-alive Agent (same pool settings). No nodiak
  // code is changed; every call below still goes through nodiak.
  let agentBroken = false;
  try {
    riak.ping(() => {});
  } catch (e) {
    agentBroken = /cb is not a function/.test(String(e && e.message));
    if (!agentBroken) throw e;
  }
  if (agentBroken) {
    skip('agentkeepalive 0.2.2 pool', 'broken on Node ' + process.version + ' (createSocket callback); using http.Agent({keepAlive:true})');
    riak.agent = new http.Agent({ keepAlive: true, maxSockets: 10, maxFreeSockets: 10, keepAliveMsecs: 15000 });
  } else {
    ok(true, 'agentkeepalive pool works on this Node');
  }

  const B = 'nodiak_test';
  const SB = 'nodiak_siblings';

  step('ping');
  {
    const [err, res] = await call((cb) => riak.ping(cb));
    noErr(err, 'ping');
    eq(res, 'OK', 'ping answer (decoded as text/html)');
  }

  step('stats');
  {
    const [err, stats] = await call((cb) => riak.stats(cb));
    noErr(err, 'stats');
    ok(stats && typeof stats === 'object' && !Buffer.isBuffer(stats) && !Array.isArray(stats), 'stats decoded as a JSON object');
    ok(typeof stats.riak_kv_version === 'string', 'stats has riak_kv_version', JSON.stringify(Object.keys(stats).slice(0, 20)));
  }

  step('resources');
  {
    const [err, res] = await call((cb) => riak.resources(cb));
    noErr(err, 'resources');
    ok(res && typeof res === 'object' && !Buffer.isBuffer(res), 'resource list decoded as a JSON object');
    eq(res.riak_kv_wm_ping, '/ping', 'resources riak_kv_wm_ping');
  }

  step('bucket props (base client)');
  {
    const [err, props] = await call((cb) => riak._bucket.props(B, cb));
    noErr(err, '_bucket.props');
    eq(props.name, B, 'props name');
    eq(props.allow_mult, false, 'default allow_mult');
    // nodiak's own test: read every prop, flip allow_mult, PUT them all back.
    props.allow_mult = !props.allow_mult;
    const [err2, saved] = await call((cb) => riak._bucket.save(B, props, cb));
    noErr(err2, '_bucket.save (whole props object)');
    eq(saved.allow_mult, true, 'props read back after save (returnbody)');
    const [err3, again] = await call((cb) => riak._bucket.props(B, cb));
    noErr(err3, '_bucket.props');
    eq(again.allow_mult, true, 'allow_mult after round trip');
    const [err4] = await call((cb) => riak._bucket.save(B, { allow_mult: false }, { returnbody: false }, cb));
    noErr(err4, '_bucket.save allow_mult=false');
    const [, back] = await call((cb) => riak._bucket.props(B, cb));
    eq(back.allow_mult, false, 'allow_mult reset');
  }

  step('bucket props (Bucket class, merge save)');
  {
    const bucket = riak.bucket(B);
    const [err, props] = await call((cb) => bucket.getProps(cb));
    noErr(err, 'Bucket#getProps');
    eq(props.name, B, 'Bucket#getProps name');
    bucket.props.last_write_wins = true;
    const [err2, saved] = await call((cb) => bucket.saveProps(cb));
    noErr(err2, 'Bucket#saveProps last_write_wins=true');
    eq(saved.props.last_write_wins, true, 'saved last_write_wins');
    const [, p2] = await call((cb) => riak._bucket.props(B, cb));
    eq(p2.last_write_wins, true, 'server has last_write_wins=true');
    bucket.props.last_write_wins = false;
    const [err3] = await call((cb) => bucket.saveProps(cb));
    noErr(err3, 'Bucket#saveProps last_write_wins=false');
    const [, p3] = await call((cb) => riak._bucket.props(B, cb));
    eq(p3.last_write_wins, false, 'server has last_write_wins=false');
  }

  const doc = { field1: 'has been set', n: 1, nested: { list: [1, 2, 3] } };
  const links = '</buckets/' + B + '/keys/other>; riaktag="friend", </buckets/' + B + '/keys/third>; riaktag="next"';

  step('store JSON with metadata, indexes and links');
  {
    const metadata = {
      index: { tags: { bin: ['this', 'that'] }, scores: { int: [1000, 250] } },
      meta: { details: 'you might want to know' },
      link: links,
    };
    const [err, obj] = await call((cb) => riak._object.save(B, 'doc', doc, metadata, cb));
    noErr(err, '_object.save');
    eq(obj.metadata.status_code, 204, 'store status');
    eq(obj.key, 'doc', 'stored key');
    eq(obj.data, doc, 'save hands back the data');
  }

  step('fetch JSON');
  let vclock1;
  {
    const [err, obj] = await call((cb) => riak._object.get(B, 'doc', cb));
    noErr(err, '_object.get');
    const md = obj.metadata;
    eq(md.status_code, 200, 'fetch status');
    eq(obj.data, doc, 'value (decoded as JSON)');
    eq(md.content_type, 'application/json', 'content type');
    eq(md.meta && md.meta.details, 'you might want to know', 'user metadata');
    eq(md.index && md.index.tags && md.index.tags.bin, ['that', 'this'], 'binary index read back');
    eq(md.index && md.index.scores && md.index.scores.int, ['250', '1000'], 'integer index read back');
    ok(typeof md.link === 'string' && md.link.includes('</buckets/' + B + '/keys/other>; riaktag="friend"') &&
      md.link.includes('</buckets/' + B + '/keys/third>; riaktag="next"') && md.link.includes('</buckets/' + B + '>; rel="up"'),
    'links read back', md.link);
    ok(typeof md.vclock === 'string' && md.vclock.length > 0, 'vclock present');
    ok(typeof md.etag === 'string' && md.etag.length > 2, 'etag present');
    ok(!isNaN(Date.parse(md.last_modified)), 'last-modified is a date', md.last_modified);
    vclock1 = md.vclock;
  }

  step('store with returnbody');
  {
    const [err, obj] = await call((cb) => riak._object.save(B, 'rb', { x: 'y' }, {}, { returnbody: true }, cb));
    noErr(err, '_object.save returnbody');
    eq(obj.metadata.status_code, 200, 'returnbody status');
    eq(obj.data, { x: 'y' }, 'returned body');
    ok(typeof obj.metadata.vclock === 'string', 'returned vclock');
  }

  step('store and fetch text');
  {
    const text = 'plain tét ✓';
    const [err] = await call((cb) => riak._object.save(B, 'text', text, { content_type: 'text/plain', meta: { lang: 'fr' } }, cb));
    noErr(err, '_object.save text/plain');
    const [err2, obj] = await call((cb) => riak._object.get(B, 'text', cb));
    noErr(err2, '_object.get text');
    eq(obj.metadata.content_type, 'text/plain', 'text content type');
    eq(obj.data, text, 'text value (UTF-8 intact)');
    eq(obj.metadata.meta && obj.metadata.meta.lang, 'fr', 'text user metadata');
  }

  step('server-assigned key (POST to /buckets/B/keys/)');
  {
    const [err, obj] = await call((cb) => riak._object.save(B, null, { anon: true }, {}, cb));
    noErr(err, '_object.save without key');
    eq(obj.metadata.status_code, 201, 'create status');
    ok(typeof obj.key === 'string' && obj.key.length > 10, 'key taken from Location', obj.metadata.location);
    const [err2, got] = await call((cb) => riak._object.get(B, obj.key, cb));
    noErr(err2, 'fetch created object');
    eq(got.data, { anon: true }, 'created object value');
  }

  step('existence (HEAD)');
  {
    const [err, exists] = await call((cb) => riak._object.exists(B, 'doc', cb));
    noErr(err, '_object.exists');
    eq(exists, true, 'exists(doc)');
    const [err2, head] = await call((cb) => riak._object.getHead(B, 'doc', cb));
    noErr(err2, '_object.getHead');
    eq(head.metadata.status_code, 200, 'HEAD status');
    eq(head.metadata.content_type, 'application/json', 'HEAD content type');
  }

  step('update with the vclock (RObject fetch/modify/save)');
  {
    const bucket = riak.bucket(B);
    const [err, robj] = await call((cb) => bucket.objects.get('doc', cb));
    noErr(err, 'Bucket objects.get');
    eq(robj.constructor.name, 'RObject', 'got an RObject');
    eq(robj.metadata.vclock, vclock1, 'RObject carries the vclock');
    robj.data.field1 = 'has been changed';
    robj.setMeta('details', 'updated');
    robj.addToIndex('scores', 7);
    // save() sends the fetched metadata back as headers: vclock, meta, index, the Link
    // header with its rel="up" entry, etag, last-modified...
    const [err2] = await call((cb) => robj.save(cb));
    noErr(err2, 'RObject#save');
    const [err3, again] = await call((cb) => riak._object.get(B, 'doc', cb));
    noErr(err3, 'fetch after update');
    eq(again.metadata.status_code, 200, 'no siblings after update');
    eq(again.data.field1, 'has been changed', 'updated value');
    eq(again.metadata.meta.details, 'updated', 'updated user metadata');
    eq(again.metadata.index.scores.int, ['7', '250', '1000'], 'updated integer index');
    ok(again.metadata.link.includes('riaktag="friend"'), 'links kept through the round trip', again.metadata.link);
    ok(again.metadata.vclock !== vclock1, 'vclock advanced');
    const [err4, fetched] = await call((cb) => riak.bucket(B).object.new('doc').fetch(cb));
    noErr(err4, 'RObject#fetch');
    eq(fetched.data.field1, 'has been changed', 'RObject#fetch value');
  }

  step('allow_mult bucket set through the client');
  {
    const bucket = riak.bucket(SB);
    bucket.props.allow_mult = true;
    const [err] = await call((cb) => bucket.saveProps(cb));
    noErr(err, 'Bucket#saveProps allow_mult=true');
    const [err2, props] = await call((cb) => riak._bucket.props(SB, cb));
    noErr(err2, '_bucket.props');
    eq(props.allow_mult, true, 'allow_mult read back');
  }

  step('two writes without a vclock make siblings');
  const v1 = { pointless: 'data' };
  const v2 = { pointless: 'sibling' };
  {
    const [err] = await call((cb) => riak._object.save(SB, 'k', v1, { meta: { extra: 'first' } }, cb));
    noErr(err, 'first write');
    const [err2] = await call((cb) => riak._object.save(SB, 'k', v2, { meta: { extra: 'second' } }, cb));
    noErr(err2, 'second write');
    const [err3, obj] = await call((cb) => riak._object.get(SB, 'k', cb));
    noErr(err3, '_object.get with siblings');
    eq(obj.metadata.status_code, 300, 'status 300');
    eq(obj.metadata.content_type, 'text/plain', 'sibling list as text/plain for Accept: */*');
    ok(Array.isArray(obj.siblings) && obj.siblings.length === 2 && obj.siblings.every((v) => /^[0-9A-Za-z]+$/.test(v)),
      'two sibling vtags', JSON.stringify(obj.siblings));
    ok(typeof obj.metadata.vclock === 'string' && obj.metadata.vclock.length > 0, 'vclock on the 300');
  }

  const sortByPointless = (a, b) => (a.pointless < b.pointless ? -1 : 1);

  step('siblings resolved by vtag fetches (Bucket objects.get)');
  let resolved;
  {
    const bucket = riak.bucket(SB);
    const [err, robj] = await call((cb) => bucket.objects.get('k', cb));
    noErr(err, 'Bucket objects.get');
    ok(Array.isArray(robj.siblings) && robj.siblings.length === 2, 'two sibling RObjects', robj.siblings && robj.siblings.length);
    eq(robj.siblings.map((s) => s.data).sort(sortByPointless), [v1, v2], 'both sibling values');
    const metas = {};
    robj.siblings.forEach((s) => { metas[s.data.pointless] = s.metadata.meta && s.metadata.meta.extra; });
    eq(metas, { data: 'first', sibling: 'second' }, 'each sibling keeps its user metadata');
    ok(robj.siblings.every((s) => typeof s.metadata.vclock === 'string' && s.metadata.vclock.length > 0), 'vtag fetches carry the vclock');
    ok([v1, v2].some((v) => JSON.stringify(v) === JSON.stringify(robj.data)), 'resolver picked one of them');
    resolved = robj;
  }

  step('siblings as one multipart/mixed fetch (getSiblingsSync)');
  {
    const bucket = riak.bucket(SB);
    bucket.getSiblingsSync = true;
    const [err, robj] = await call((cb) => bucket.objects.get('k', cb));
    noErr(err, 'Bucket objects.get multipart');
    ok(Array.isArray(robj.siblings) && robj.siblings.length === 2, 'two multipart siblings', robj.siblings && robj.siblings.length);
    // nodiak leaves multipart part bodies undecoded.
    eq(robj.siblings.map((s) => JSON.parse(s.data)).sort(sortByPointless), [v1, v2], 'both values from the multipart body');
    eq(robj.siblings.map((s) => s.metadata.content_type), ['application/json', 'application/json'], 'part content types');
    eq(robj.siblings.map((s) => s.metadata.meta && s.metadata.meta.extra).sort(), ['first', 'second'], 'part user metadata');
  }

  step('resolve siblings by writing with the vclock');
  {
    resolved.data = { pointless: 'resolved' };
    const [err] = await call((cb) => resolved.save(cb));
    noErr(err, 'RObject#save resolved value');
    const [err2, obj] = await call((cb) => riak._object.get(SB, 'k', cb));
    noErr(err2, 'fetch after resolution');
    eq(obj.metadata.status_code, 200, 'single value after resolution');
    eq(obj.data, { pointless: 'resolved' }, 'resolved value');
    ok(obj.siblings === undefined, 'no siblings left');
  }

  step('delete');
  {
    const deletedAt = Date.now();
    const [err, res] = await call((cb) => riak._object.delete(B, 'doc', cb));
    noErr(err, '_object.delete');
    eq(res.metadata.status_code, 204, 'delete status');
    const [err2, res2] = await call((cb) => riak._object.get(B, 'doc', cb));
    ok(err2 && err2.status_code === 404, 'fetch after delete is 404', err2 && err2.status_code);
    if (Date.now() - deletedAt < 2500) { // the tombstone is visible for 3 s
      eq(res2.metadata.deleted, 'true', 'tombstone marked deleted');
    } else {
      skip('tombstone marked deleted', 'too slow to see the tombstone inside the reap delay');
    }
    const [err3, exists] = await call((cb) => riak._object.exists(B, 'doc', cb));
    noErr(err3, '_object.exists after delete');
    eq(exists, false, 'exists after delete');
    const [err4, res4] = await call((cb) => riak._object.delete(B, 'never-there', cb));
    noErr(err4, 'delete of a missing key (nodiak treats 404 as done)');
    eq(res4.metadata.status_code, 404, 'delete of a missing key status');
    const [err5] = await call((cb) => riak.bucket(SB).object.new('k').delete(cb));
    noErr(err5, 'RObject#delete');
    const [err6] = await call((cb) => riak._object.get(SB, 'k', cb));
    ok(err6 && err6.status_code === 404, 'RObject deleted', err6 && err6.status_code);
  }

  step('fetch a missing key');
  {
    const [err, res] = await call((cb) => riak._object.get(B, 'missing', cb));
    ok(err && err.status_code === 404, 'error with status_code 404', err && err.status_code);
    eq(err.message, 'not found\n', 'error message');
    eq(res.metadata.status_code, 404, 'response metadata status');
    const [err2, robj] = await call((cb) => riak.bucket(B).objects.get('missing', cb));
    ok(err2 && err2.status_code === 404 && robj === null, 'Bucket objects.get reports the 404', err2 && err2.status_code);
  }

  step('not exercised');
  skip('counters (riak.counter)', 'not implemented in Cairn yet');
  skip('2i queries (search.twoi)', 'not implemented in Cairn yet (indexes are only stored and read back above)');
  skip('key and bucket listing (_bucket.keys, _bucket.list, objects.all)', 'not implemented in Cairn yet');
  skip('MapReduce (mapred)', 'not implemented in Cairn yet');
  skip('Riak Search (search.solr)', 'not implemented in Cairn yet');
});
