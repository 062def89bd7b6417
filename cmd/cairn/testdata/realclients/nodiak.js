// nodiak 0.4.4 against Cairn (--dialect riak). Every Riak operation below is an
// unmodified nodiak call; the script only checks what nodiak hands back.
//
// nodiak talks to the new URL form (/buckets/B/keys/K, /buckets/B/props), sends
// Accept: */* and picks its body decoder by the exact response Content-Type, so it also
// needs a Content-Type on bodiless 204 responses. It always lists keys as a stream
// (GET /buckets/B/keys/?keys=stream, trailing slash included, even for its aggregated
// call) and expects each streamed chunk to be one whole {"keys":[...]} object; it
// splits a streamed 2i answer (stream=true) at chunks that start with the multipart
// boundary; lists buckets with /buckets?buckets=true; and uses
// /buckets/B/index/FIELD/ARG[/ARG2] and /buckets/B/counters/K.
'use strict';

const http = require('http');
const { step, ok, eq, noErr, skip, info, call, run, target, show, inParallel, drain, sorted } = require('./lib/check');

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

  // ---- key and bucket listing, 2i, counters ----
  const LB = 'nodiak_listing'; // many objects: several streamed batches
  const IB = 'nodiak_2i'; // a few objects with chosen indexes
  const CB = 'nodiak_counters';
  const EB = 'nodiak_never_written';
  const N = 1100; // more than one 1000-name batch of a streamed listing or 2i answer
  const pad = (i) => String(i).padStart(4, '0');
  const many = Array.from({ length: N }, (_, i) => 'k' + pad(i));
  // Keys that need percent-encoding in a path (nodiak encodes them) come back decoded.
  const odd = ['with space', 'slash/inside', 'plus+sign', 'ünïcode'];

  step('write objects for listing and 2i');
  {
    const t0 = Date.now();
    await inParallel(many, 10, async (k, i) => {
      const [err] = await call((cb) => riak._object.save(LB, k, { i }, { index: { n: { int: [i] } } }, cb));
      noErr(err, 'save ' + LB + '/' + k);
    });
    for (const k of odd) {
      const [err] = await call((cb) => riak._object.save(IB, k, { odd: k }, cb));
      noErr(err, 'save ' + IB + '/' + k);
    }
    const people = {
      alice: { age: { int: [25, 28] }, tag: { bin: ['red', 'green'] }, city: { bin: ['paris'] } },
      bob: { age: { int: [31] }, tag: { bin: ['blue'] }, city: { bin: ['berlin'] } },
      carol: { age: { int: [22] }, tag: { bin: ['red'] }, city: { bin: ['rome'] } },
      dave: undefined,
    };
    for (const [k, index] of Object.entries(people)) {
      const [err] = await call((cb) => riak._object.save(IB, k, { name: k }, index ? { index } : {}, cb));
      noErr(err, 'save ' + IB + '/' + k);
    }
    info('wrote ' + (N + odd.length + 4) + ' objects in ' + (Date.now() - t0) + ' ms');
  }
  const ibKeys = sorted(['alice', 'bob', 'carol', 'dave'].concat(odd));

  step('list keys (_bucket.keys: GET /buckets/B/keys/?keys=stream, aggregated)');
  {
    const [err, keys] = await call((cb) => riak._bucket.keys(LB, cb));
    noErr(err, '_bucket.keys');
    eq(keys.length, N, 'key count');
    eq(sorted(keys), many, 'every key once');
    const [err2, keys2] = await call((cb) => riak._bucket.keys(IB, cb));
    noErr(err2, '_bucket.keys ' + IB);
    eq(sorted(keys2), ibKeys, 'keys that needed encoding come back decoded');
    const [err3, none] = await call((cb) => riak._bucket.keys(EB, cb));
    noErr(err3, '_bucket.keys of an empty bucket');
    eq(none, [], 'no keys in a bucket never written');
  }

  step('stream keys (_bucket.keys(B).stream())');
  {
    const res = await drain(riak._bucket.keys(LB).stream(), 'data');
    eq(res.errors, [], 'no stream errors');
    info('the ' + N + ' keys arrived in ' + res.items.length + ' batch(es)');
    eq(sorted([].concat(...res.items)), many, 'streamed keys');
    const empty = await drain(riak._bucket.keys(EB).stream(), 'data');
    eq(empty.errors, [], 'no stream errors (empty bucket)');
    eq(empty.items, [], 'no key batches for an empty bucket');
  }

  step('all objects of a bucket (Bucket objects.all: key stream + fetches)');
  {
    const [err, robjs] = await call((cb) => riak.bucket(IB).objects.all(cb));
    noErr(err, 'objects.all');
    eq(sorted(robjs.map((o) => o.key)), ibKeys, 'one RObject per key');
    const alice = robjs.find((o) => o.key === 'alice');
    eq(alice.data, { name: 'alice' }, 'RObject value');
    eq(alice.metadata.index.age.int, ['25', '28'], 'RObject indexes');
  }

  step('list buckets (_bucket.list: GET /buckets?buckets=true)');
  {
    const [err, buckets] = await call((cb) => riak._bucket.list(cb));
    noErr(err, '_bucket.list');
    ok(Array.isArray(buckets), 'an array of bucket names', show(buckets));
    for (const b of [B, LB, IB]) ok(buckets.includes(b), 'lists ' + b, show(buckets));
    ok(!buckets.includes(EB), 'does not list a bucket never written');
    eq(buckets.length, new Set(buckets).size, 'each bucket once');
  }

  step('2i exact match (Bucket search.twoi)');
  {
    const ib = riak.bucket(IB);
    const [err, red] = await call((cb) => ib.search.twoi('red', 'tag', cb)); // /index/tag_bin/red
    noErr(err, 'twoi tag_bin = red');
    eq(sorted(red), ['alice', 'carol'], 'tag_bin = red');
    const [err2, b31] = await call((cb) => ib.search.twoi(31, 'age', cb)); // /index/age_int/31
    noErr(err2, 'twoi age_int = 31');
    eq(b31, ['bob'], 'age_int = 31');
    const [err3, none] = await call((cb) => ib.search.twoi('purple', 'tag', cb));
    noErr(err3, 'twoi tag_bin = purple');
    eq(none, [], 'no match');
    const [err4, upper] = await call((cb) => ib.search.twoi('red', 'TAG', cb)); // /index/TAG_bin/red
    noErr(err4, 'twoi TAG_bin = red');
    eq(sorted(upper), ['alice', 'carol'], 'field name in the path is case-insensitive');
  }

  step('2i range (Bucket search.twoi dedupes; _bucket.twoi shows one result per index entry)');
  {
    const [err, range] = await call((cb) => riak.bucket(IB).search.twoi([20, 30], 'age', cb)); // /index/age_int/20/30
    noErr(err, 'twoi age_int 20..30');
    eq(sorted(range), ['alice', 'carol'], 'age_int 20..30 (deduplicated by nodiak)');
    const [err2, raw] = await call((cb) => riak._bucket.twoi(IB, [20, 30], 'age_int', {}, cb));
    noErr(err2, '_bucket.twoi age_int 20..30');
    eq(sorted(raw), ['alice', 'alice', 'carol'], 'alice once per value in range');
    const [err3, bounds] = await call((cb) => riak._bucket.twoi(IB, [22, 25], 'age_int', {}, cb));
    noErr(err3, '_bucket.twoi age_int 22..25');
    eq(sorted(bounds), ['alice', 'carol'], 'both ends inclusive');
    const [err4, bin] = await call((cb) => riak.bucket(IB).search.twoi(['b', 'q'], 'city', cb)); // /index/city_bin/b/q
    noErr(err4, 'twoi city_bin b..q');
    eq(sorted(bin), ['alice', 'bob'], 'city_bin b..q (bytewise)');
    const [err5, n] = await call((cb) => riak._bucket.twoi(LB, [100, 109], 'n_int', {}, cb));
    noErr(err5, '_bucket.twoi n_int 100..109');
    eq(sorted(n), many.slice(100, 110), 'integer range compared numerically');
  }

  step('2i return_terms (_bucket.twoi)');
  {
    const byTerm = (a, b) => {
      const ka = Object.keys(a)[0] + '/' + Object.values(a)[0];
      const kb = Object.keys(b)[0] + '/' + Object.values(b)[0];
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    };
    const [err, res] = await call((cb) => riak._bucket.twoi(IB, [20, 30], 'age_int', { return_terms: true }, cb));
    noErr(err, '_bucket.twoi return_terms');
    eq(sorted(res, byTerm), [{ 22: 'carol' }, { 25: 'alice' }, { 28: 'alice' }], 'term/key pairs (integer terms as strings)');
    const [err2, re] = await call((cb) => riak._bucket.twoi(IB, ['a', 'z'], 'tag_bin', { return_terms: true, term_regex: '^(red|blue)$' }, cb));
    noErr(err2, '_bucket.twoi term_regex');
    eq(sorted(re, byTerm), [{ blue: 'bob' }, { red: 'alice' }, { red: 'carol' }], 'term_regex keeps matching terms');
  }

  step('2i on $key and $bucket');
  {
    const [err, keyRange] = await call((cb) => riak.bucket(IB).search.twoi(['b', 'd'], '$key', cb)); // /index/%24key/b/d
    noErr(err, 'twoi $key b..d');
    eq(sorted(keyRange), ['bob', 'carol'], '$key b..d');
    const [err2, all] = await call((cb) => riak._bucket.twoi(IB, '_', '$bucket', {}, cb)); // /index/%24bucket/_
    noErr(err2, '_bucket.twoi $bucket');
    eq(sorted(all), ibKeys, '$bucket lists every key');
  }

  step('2i paging (max_results / continuation)');
  {
    const ib = riak.bucket(LB);
    const pages = [];
    let continuation;
    for (let p = 0; p < 5; p++) {
      const opts = { max_results: 500 };
      if (continuation) opts.continuation = continuation;
      const [err, keys, cont] = await call((cb) => ib.search.twoi([0, 5000], 'n', opts, cb));
      noErr(err, 'twoi page ' + (p + 1));
      pages.push({ keys, cont });
      continuation = cont;
      if (!cont) break;
    }
    eq(pages.map((p) => p.keys.length), [500, 500, 100], 'page sizes');
    eq(pages.map((p) => typeof p.cont), ['string', 'string', 'undefined'], 'continuation only on full pages');
    eq([].concat(...pages.map((p) => p.keys)), many, 'pages in term order, every key once');
    const [err, terms, cont] = await call((cb) => riak._bucket.twoi(LB, [10, 5000], 'n_int', { return_terms: true, max_results: 3 }, cb));
    noErr(err, '_bucket.twoi return_terms + max_results');
    eq(terms, [{ 10: 'k0010' }, { 11: 'k0011' }, { 12: 'k0012' }], 'first page of term/key pairs');
    const [err2, terms2] = await call((cb) => riak._bucket.twoi(LB, [10, 5000], 'n_int', { return_terms: true, max_results: 2, continuation: cont }, cb));
    noErr(err2, '_bucket.twoi next page');
    eq(terms2, [{ 13: 'k0013' }, { 14: 'k0014' }], 'the next page starts after the last result');
    const [err3, exact, cont3] = await call((cb) => riak.bucket(IB).search.twoi('red', 'tag', { max_results: 1 }, cb));
    noErr(err3, 'twoi exact, max_results=1');
    eq(exact, ['alice'], 'exact query pages are sorted by key');
    const [err4, exact2, cont4] = await call((cb) => riak.bucket(IB).search.twoi('red', 'tag', { max_results: 1, continuation: cont3 }, cb));
    noErr(err4, 'twoi exact, page 2');
    eq(exact2, ['carol'], 'exact query page 2');
    ok(typeof cont4 === 'string', 'a full page has a continuation');
    const [err5, exact3, cont5] = await call((cb) => riak.bucket(IB).search.twoi('red', 'tag', { max_results: 1, continuation: cont4 }, cb));
    noErr(err5, 'twoi exact, page 3');
    eq([exact3, cont5], [[], undefined], 'empty last page without continuation');
  }

  step('2i streaming (stream=true, multipart/mixed)');
  {
    const res = await drain(riak.bucket(LB).search.twoi([0, 5000], 'n', {}).stream(), 'data');
    eq(res.errors, [], 'no stream errors');
    eq(sorted(res.items), many, 'every key once');
    eq(res.end, [undefined], 'no continuation without max_results');
    const red = await drain(riak.bucket(IB).search.twoi('red', 'tag', {}).stream(), 'data');
    eq(red.errors, [], 'no stream errors (exact)');
    eq(sorted(red.items), ['alice', 'carol'], 'streamed exact match');
    const none = await drain(riak.bucket(IB).search.twoi('purple', 'tag', {}).stream(), 'data');
    eq([none.errors, none.items], [[], []], 'streamed query without results');
    const paged = await drain(riak._bucket.twoi(LB, [0, 5000], 'n_int', { max_results: 600 }).stream(), 'data');
    eq(paged.errors, [], 'no stream errors (paged)');
    eq([].concat(...paged.items), many.slice(0, 600), 'streamed page in term order');
    ok(typeof paged.end[0] === 'string' && paged.end[0].length > 0, 'continuation part at the end of a full streamed page', show(paged.end));
    const rest = await drain(riak._bucket.twoi(LB, [0, 5000], 'n_int', { max_results: 600, continuation: paged.end[0] }).stream(), 'data');
    eq(rest.errors, [], 'no stream errors (next page)');
    eq([].concat(...rest.items), many.slice(600), 'streamed next page');
    eq(rest.end, [undefined], 'no continuation after the last page');
    const terms = await drain(riak._bucket.twoi(IB, [20, 30], 'age_int', { return_terms: true }).stream(), 'data');
    eq(terms.errors, [], 'no stream errors (return_terms)');
    eq([].concat(...terms.items).map((r) => Object.keys(r)[0] + '=' + Object.values(r)[0]).sort(), ['22=carol', '25=alice', '28=alice'], 'streamed term/key pairs');
  }

  step('2i errors');
  {
    const [err, res] = await call((cb) => riak._bucket.twoi(IB, 'abc', 'age_int', {}, cb));
    ok(err && err.status_code === 400, 'non-integer term on an _int index is a 400', err && err.status_code);
    eq(res, null, 'no results');
    const [err2] = await call((cb) => riak._bucket.twoi(IB, 'x', 'age_foo', {}, cb));
    ok(err2 && err2.status_code === 400, 'unknown index type is a 400', err2 && err2.status_code);
  }

  step('counters (riak.counter: /buckets/B/counters/K)');
  {
    const [err] = await call((cb) => riak._bucket.save(CB, { allow_mult: true }, cb));
    noErr(err, '_bucket.save allow_mult=true');
    const hits = riak.counter(CB, 'hits');
    const [err2, r2] = await call((cb) => hits.add(4, cb));
    noErr(err2, 'counter add(4)');
    eq(r2.metadata.status_code, 204, 'increment status');
    const [err3, r3] = await call((cb) => hits.subtract(2, cb));
    noErr(err3, 'counter subtract(2)');
    eq(r3.metadata.status_code, 204, 'decrement status');
    const [err4, v] = await call((cb) => hits.value(cb));
    noErr(err4, 'counter value');
    eq(v, 2, '+4 -2');
    const [err5] = await call((cb) => hits.add(-7, cb));
    noErr(err5, 'counter add(-7)');
    const [, v2] = await call((cb) => hits.value(cb));
    eq(v2, -5, 'negative increments');
    const other = riak.counter(CB, 'other counter'); // nodiak percent-encodes the name
    const [err6] = await call((cb) => other.add(1, cb));
    noErr(err6, 'second counter add(1)');
    const [, v3] = await call((cb) => other.value(cb));
    eq(v3, 1, 'second counter');
    const [, v4] = await call((cb) => hits.value(cb));
    eq(v4, -5, 'first counter unchanged');
    const [err7, v5] = await call((cb) => riak.counter(CB, 'never').value(cb));
    ok(err7 && err7.status_code === 404, 'missing counter is a 404', err7 && err7.status_code);
    ok(Number.isNaN(v5), 'missing counter value is NaN (nodiak parses "not found")');
    const [err8, keys] = await call((cb) => riak._bucket.keys(CB, cb));
    noErr(err8, '_bucket.keys of the counter bucket');
    eq(sorted(keys), ['hits', 'other counter'], 'counters are ordinary keys of their bucket');
    const [err9] = await call((cb) => riak.counter(B, 'hits').add(1, cb));
    ok(err9 && err9.status_code === 409, 'counter in a bucket without allow_mult is a 409', err9 && err9.status_code);
    eq(err9.message, "Counters require bucket property 'allow_mult=true'", '409 message');
  }

  step('not exercised');
  skip('link walking', 'nodiak 0.4.4 has no link-walk call (only MapReduce link phases)');
  skip('MapReduce (riak.mapred.inputs(...).map/link/reduce.run)', 'not implemented in Cairn yet');
  skip('Riak Search (bucket.search.solr)', 'not implemented in Cairn yet');
});
