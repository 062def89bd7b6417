// riak-js 1.1.0 (HTTP API) against Cairn (--dialect riak). Every Riak operation below is
// an unmodified riak-js call; the script only checks what riak-js hands back.
//
// riak-js talks to the old URL form (/riak/B/K, /riak/B for props, POST /riak/B), does
// not percent-encode keys, sends Accept: multipart/mixed,application/json;q=0.7, */*;q=0.5
// (so a 300 comes back as multipart/mixed and riak-js returns every sibling), parses
// links with a regex that only knows the /riak/B/K form, and decodes bodies by the exact
// Content-Type.
'use strict';

const http = require('http');
const { step, ok, eq, noErr, skip, call, run, target, fail } = require('./lib/check');

run('riak-js', async () => {
  const { host, port } = target();
  const db = require('riak-js')({ host, port });

  // riak-js's instrumentation events tell which request each call made.
  const seen = [];
  db.on('riak.request.response', (ev) => seen.push(ev.method.toUpperCase() + ' ' + ev.path + ' -> ' + ev.response.statusCode));
  const last = () => seen[seen.length - 1];

  const B = 'users-riak-js-tests';
  const SB = 'siblings-riak-js-tests';

  step('transport');
  // riak-js hands its Meta object to http.request as the options; the request path and
  // headers are getters on Meta's prototype. Node 0.10 read them from the object as it
  // was; current Node copies only the options' own properties, so every riak-js request
  // goes out as "<method> /" without headers. That is riak-js failing on modern Node, not
  // the server. Detect it with an ordinary fetch of a missing key, and if so wrap
  // http.request so it receives the inherited properties as own ones, which is what
  // riak-js was written against. No riak-js code is changed.
  {
    const [err, , meta] = await call((cb) => db.get(B, 'transport-probe', cb));
    if (err && err.notFound && meta.statusCode === 404) {
      ok(true, 'riak-js requests reach their paths on this Node');
    } else if (!err && meta && meta.statusCode === 200 && meta.contentType === 'text/html') {
      skip('riak-js transport as is', 'broken on Node ' + process.version + ': its fetch of /riak/' + B +
        '/transport-probe was answered with the "/" resource list (200 text/html); wrapping http.request');
      const request = http.request;
      http.request = function (options, cb) {
        if (options && typeof options === 'object' && !(options instanceof URL) && Object.getPrototypeOf(options) !== Object.prototype) {
          const own = {};
          for (const k in options) own[k] = options[k]; // own and inherited enumerable properties
          return request.call(this, own, cb);
        }
        return request.apply(this, arguments);
      };
      const [err2, , meta2] = await call((cb) => db.get(B, 'transport-probe', cb));
      ok(err2 && err2.notFound && meta2.statusCode === 404, 'with the wrapper, a missing key is a 404', last());
    } else {
      fail('unexpected answer to the transport probe: ' + last() + ' ' + (err && err.message));
    }
  }

  step('ping');
  {
    const [err, alive] = await call((cb) => db.ping(cb));
    noErr(err, 'ping');
    eq(alive, true, 'ping result');
    eq(last(), 'HEAD /ping -> 200', 'ping request');
  }

  step('stats');
  {
    const [err, stats, meta] = await call((cb) => db.stats(cb));
    noErr(err, 'stats');
    eq(meta.contentType, 'application/json', 'stats content type');
    ok(stats && typeof stats === 'object' && !Buffer.isBuffer(stats), 'stats decoded as a JSON object');
    ok(stats.riak_core_version !== undefined, 'stats has riak_core_version (riak-js test)');
  }

  step('resources');
  {
    const [err, res] = await call((cb) => db.resources(cb));
    noErr(err, 'resources');
    ok(res && typeof res === 'object' && !Buffer.isBuffer(res), 'resource list decoded as a JSON object');
    eq(res.riak_kv_wm_ping, '/ping', 'resources riak_kv_wm_ping');
  }

  step('bucket props (GET/PUT /riak/B)');
  {
    const [err, props, meta] = await call((cb) => db.getBucket(B, cb));
    noErr(err, 'getBucket');
    eq(meta.statusCode, 200, 'getBucket status');
    eq(props.name, B, 'props name');
    eq(props.last_write_wins, false, 'default last_write_wins');
    // PUT every property back with one changed.
    props.last_write_wins = true;
    const [err2, , meta2] = await call((cb) => db.saveBucket(B, props, cb));
    noErr(err2, 'saveBucket (whole props object)');
    eq(meta2.statusCode, 204, 'saveBucket status');
    eq(last(), 'PUT /riak/' + B + ' -> 204', 'saveBucket request');
    const [, props2] = await call((cb) => db.getBucket(B, cb));
    eq(props2.last_write_wins, true, 'last_write_wins read back');
    const [err3] = await call((cb) => db.saveBucket(B, { last_write_wins: false }, cb));
    noErr(err3, 'saveBucket last_write_wins=false');
    const [, props3] = await call((cb) => db.getBucket(B, cb));
    eq(props3.last_write_wins, false, 'last_write_wins reset');
  }

  const K = 'test@gmail.com'; // riak-js sends keys unencoded
  const doc = { email: 'test@gmail.com', name: 'Testy Test', a: [1, 2] };
  const links = [{ bucket: B, key: 'other@gmail.com', tag: 'friend' }, { bucket: B, key: 'third' }];

  step('store JSON with metadata, indexes and links');
  {
    const [err, data, meta] = await call((cb) => db.save(B, K, doc, {
      links,
      index: { age: 28, alias: 'fran', tags: ['red', 'green'] }, // an array goes out as repeated headers
      headers: { 'X-Riak-Meta-Colour': 'blue' },
    }, cb));
    noErr(err, 'save');
    eq(data, undefined, 'no body without returnbody');
    eq(meta.statusCode, 204, 'store status');
    eq(last(), 'PUT /riak/' + B + '/' + K + ' -> 204', 'store request');
  }

  step('fetch JSON');
  let fetched;
  {
    const [err, data, meta] = await call((cb) => db.get(B, K, cb));
    noErr(err, 'get');
    eq(meta.statusCode, 200, 'fetch status');
    eq(data, doc, 'value (decoded as JSON)');
    eq(meta.contentType, 'application/json', 'content type');
    eq(meta.links, [{ bucket: B, key: 'other@gmail.com', tag: 'friend' }, { bucket: B, key: 'third', tag: '_' }], 'links read back (tagless link as "_")');
    eq(meta.index, { age: 28, alias: 'fran', tags: 'green, red' }, 'indexes read back');
    eq(meta.headers['x-riak-meta-colour'], 'blue', 'user metadata');
    ok(typeof meta.vclock === 'string' && meta.vclock.length > 0, 'vclock present');
    ok(typeof meta.etag === 'string' && meta.etag.length > 0, 'etag present');
    ok(!isNaN(Date.parse(meta.lastMod)), 'last-modified is a date', meta.lastMod);
    fetched = { data, meta };
  }

  step('store with returnbody');
  {
    const [err, data, meta] = await call((cb) => db.save(B, 'test-returnbody@gmail.com', { user: 'x', a: [1, 2] }, { returnbody: true }, cb));
    noErr(err, 'save returnbody');
    eq(meta.statusCode, 200, 'returnbody status');
    eq(data, { user: 'x', a: [1, 2] }, 'returned body');
    eq(meta.key, 'test-returnbody@gmail.com', 'meta key');
    ok(typeof meta.vclock === 'string' && meta.vclock.length > 0, 'returned vclock');
  }

  step('store and fetch text');
  {
    const [err] = await call((cb) => db.save(B, 'text-with-unicode', 'tét', cb));
    noErr(err, 'save text');
    const [err2, data, meta] = await call((cb) => db.get(B, 'text-with-unicode', cb));
    noErr(err2, 'get text');
    eq(meta.contentType, 'text/plain', 'text content type');
    eq(data, 'tét', 'text value');
    eq(Buffer.byteLength(data), 4, 'text is 4 bytes of UTF-8');
  }

  step('server-assigned key (POST /riak/B)');
  {
    const [err, , meta] = await call((cb) => db.save(B, undefined, 'anonymous', cb));
    noErr(err, 'save without key');
    eq(meta.statusCode, 201, 'create status');
    eq(meta.bucket, B, 'bucket from Location');
    ok(typeof meta.key === 'string' && meta.key.length > 10, 'key from Location', meta.headers.location);
    const [err2, data] = await call((cb) => db.get(B, meta.key, cb));
    noErr(err2, 'fetch created object');
    eq(data, 'anonymous', 'created object value');
  }

  step('existence (HEAD)');
  {
    const [err, data, meta] = await call((cb) => db.head(B, K, cb));
    noErr(err, 'head');
    eq(data, undefined, 'HEAD has no body');
    eq(meta.statusCode, 200, 'HEAD status');
    eq(meta.contentType, 'application/json', 'HEAD content type');
    const [err2, exists] = await call((cb) => db.exists(B, K, cb));
    noErr(err2, 'exists');
    eq(exists, true, 'exists');
  }

  step('update reusing the fetched meta (riak-js test)');
  {
    // The fetched meta carries the vclock, links and indexes, and every response header,
    // which riak-js sends back as request headers.
    const [err, , meta] = await call((cb) => db.save(B, K, fetched.data, fetched.meta, cb));
    noErr(err, 'save with the fetched meta');
    eq(meta.statusCode, 204, 'update status');
    const [err2, data, meta2] = await call((cb) => db.get(B, K, cb));
    noErr(err2, 'get after update');
    eq(data, doc, 'value');
    eq(meta2.links.length, 2, 'links kept');
    eq(meta2.index, { age: 28, alias: 'fran', tags: 'green, red' }, 'indexes kept');
    ok(meta2.vclock !== fetched.meta.vclock, 'vclock advanced');
  }

  step('update with the vclock');
  {
    const [err, , meta] = await call((cb) => db.get(B, K, cb));
    noErr(err, 'get');
    const changed = Object.assign({}, doc, { name: 'Changed Name' });
    const [err2, , meta2] = await call((cb) => db.save(B, K, changed, { vclock: meta.vclock }, cb));
    noErr(err2, 'save with vclock');
    eq(meta2.statusCode, 204, 'update status');
    const [err3, data] = await call((cb) => db.get(B, K, cb));
    noErr(err3, 'get after update');
    eq(data, changed, 'updated value');
  }

  step('allow_mult bucket set through the client');
  {
    const [err, , meta] = await call((cb) => db.saveBucket(SB, { allow_mult: true }, cb));
    noErr(err, 'saveBucket allow_mult=true');
    eq(meta.statusCode, 204, 'saveBucket status');
    const [err2, props] = await call((cb) => db.getBucket(SB, cb));
    noErr(err2, 'getBucket');
    eq(props.allow_mult, true, 'allow_mult read back');
  }

  step('two writes without a vclock make siblings');
  let sibMeta;
  {
    const [err] = await call((cb) => db.save(SB, 'haensel', { eats: 'lebkuchen' }, cb));
    noErr(err, 'first write');
    const [err2] = await call((cb) => db.save(SB, 'haensel', { likes: 'lebkuchen' }, { headers: { 'X-Riak-Meta-Who': 'gretel' } }, cb));
    noErr(err2, 'second write');
    const [err3, data, meta] = await call((cb) => db.get(SB, 'haensel', cb));
    noErr(err3, 'get with siblings');
    eq(meta.statusCode, 300, 'status 300');
    ok(/^multipart\/mixed; boundary=/.test(meta.contentType), 'multipart/mixed chosen for riak-js Accept', meta.contentType);
    ok(Array.isArray(data) && data.length === 2, 'two siblings', Array.isArray(data) ? data.length : typeof data);
    const values = data.map((s) => s.data).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    eq(values, [{ eats: 'lebkuchen' }, { likes: 'lebkuchen' }], 'both sibling values (decoded as JSON)');
    eq(data.map((s) => s.meta.contentType), ['application/json', 'application/json'], 'sibling content types');
    ok(data.every((s) => s.meta.vclock === meta.vclock && typeof s.meta.etag === 'string' && s.meta.etag.length > 0), 'each sibling has the vclock and its etag');
    const who = data.map((s) => s.meta.headers['x-riak-meta-who']).filter(Boolean);
    eq(who, ['gretel'], 'sibling user metadata');
    sibMeta = meta;
  }

  step('resolve siblings by writing with the vclock');
  {
    const merged = { eats: 'lebkuchen', likes: 'lebkuchen' };
    const [err] = await call((cb) => db.save(SB, 'haensel', merged, { vclock: sibMeta.vclock }, cb));
    noErr(err, 'save merged value with vclock');
    const [err2, data, meta] = await call((cb) => db.get(SB, 'haensel', cb));
    noErr(err2, 'get after resolution');
    eq(meta.statusCode, 200, 'single value after resolution');
    eq(data, merged, 'resolved value');
    const [err3] = await call((cb) => db.save(SB, 'haensel', { eats: 'more' }, { vclock: meta.vclock }, cb));
    noErr(err3, 'update with vclock in allow_mult bucket');
    const [, data4, meta4] = await call((cb) => db.get(SB, 'haensel', cb));
    eq(meta4.statusCode, 200, 'still one value after an update with the vclock');
    eq(data4, { eats: 'more' }, 'updated value');
  }

  step('delete');
  {
    const deletedAt = Date.now();
    const [err, , meta] = await call((cb) => db.remove(B, K, cb));
    noErr(err, 'remove');
    eq(meta.statusCode, 204, 'delete status');
    const [err2, data, meta2] = await call((cb) => db.get(B, K, cb));
    ok(err2 && err2.notFound === true && err2.statusCode === 404, 'fetch after delete is not found', err2 && err2.statusCode);
    ok(data instanceof Error, 'data is the error (riak-js)');
    eq(meta2.statusCode, 404, 'meta status');
    if (Date.now() - deletedAt < 2500) { // the tombstone is visible for 3 s
      eq(meta2.headers['x-riak-deleted'], 'true', 'tombstone marked deleted');
    } else {
      skip('tombstone marked deleted', 'too slow to see the tombstone inside the reap delay');
    }
    const [err3, exists] = await call((cb) => db.exists(B, K, cb));
    noErr(err3, 'exists after delete');
    eq(exists, false, 'exists after delete');
    const [err4, , meta4] = await call((cb) => db.remove(B, 'never-there', cb));
    eq(meta4.statusCode, 404, 'delete of a missing key status');
    ok(err4 && err4.notFound, 'riak-js reports the 404 as notFound');
    const [err5, , meta5] = await call((cb) => db.remove(SB, 'haensel', cb));
    noErr(err5, 'remove sibling key');
    eq(meta5.statusCode, 204, 'delete status');
  }

  step('fetch a missing key');
  {
    const [err, data, meta] = await call((cb) => db.get(B, 'missing@nowhere', cb));
    ok(err && err.notFound === true && err.statusCode === 404, 'error is notFound with statusCode 404', err && err.statusCode);
    eq(err.message, 'not found', 'error message');
    ok(data === err, 'data is the error');
    eq(meta.statusCode, 404, 'meta status');
    const [err2, data2, meta2] = await call((cb) => db.get(B, 'missing@nowhere', { noError404: true }, cb));
    eq(err2, undefined, 'noError404: no error');
    eq(data2 && data2.statusCode, 404, 'noError404: data carries the 404');
    eq(meta2.statusCode, 404, 'noError404: meta status');
    const [err3, exists] = await call((cb) => db.exists(B, 'missing@nowhere', cb));
    noErr(err3, 'exists');
    eq(exists, false, 'exists(missing)');
  }

  step('not exercised');
  skip('keys, count, buckets', 'key and bucket listing not implemented in Cairn yet');
  skip('query (2i)', 'not implemented in Cairn yet (indexes are only stored and read back above)');
  skip('walk', 'link walking not implemented in Cairn yet (links are only stored and read back above)');
  skip('mapreduce, getAll', 'MapReduce not implemented in Cairn yet');
  skip('search, yokozuna', 'search not implemented in Cairn yet');
  skip('getFile/saveFile/removeFile', 'Luwak is not part of the Riak KV interface');
  skip('protobuf API', 'Cairn serves HTTP only');
});
