import { createHash, randomUUID, verify } from 'node:crypto';
import { Readable } from 'node:stream';
import canonicalize from 'canonicalize';
import sharp from 'sharp';
import tar from 'tar-stream';
import type { FrameRow } from '../core/export/parquet-tables';
import type { DatasetCommit } from '../generated/prisma/client';
import { createFrame, removeTestBlobs } from '../testkit/annotations';
import { useApiForFile } from '../testkit/api';
import { createCommitFixture } from '../testkit/commits';

/**
 * Certificates, release verification, the registry, gold-set lineage, archive downloads with
 * ranges, single files and WebDataset shards, against the real PostgreSQL and MinIO
 * (docs/datasets-release.md). Archives and shards are read back with tar-stream and signatures
 * checked with node:crypto over `canonicalize`'s bytes, neither of which shares code with the writers.
 */
const prefixes: string[] = [];

// Declared before useApiForFile's teardown so that it runs while the API and its database still exist.
afterAll(async () => {
  if (!ctx.api) return;
  const { storage } = ctx.api.deps;
  const bucket = storage.bucket('exports');
  for (const prefix of prefixes) {
    const keys: string[] = [];
    for await (const item of storage.client.listObjectsV2(bucket, prefix, true))
      if ((item as { name?: string }).name) keys.push((item as { name: string }).name);
    if (keys.length) await storage.client.removeObjects(bucket, keys);
  }
  await removeTestBlobs(ctx.api.deps);
});
const ctx = useApiForFile();

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');
const jpeg = (shade: number) =>
  sharp({ create: { width: 8, height: 6, channels: 3, background: { r: shade, g: 40, b: 90 } } })
    .jpeg()
    .toBuffer();

const frameRow = (frameId: string, sessionId: string, split: string, index: number): FrameRow => ({
  frame_id: frameId,
  session_id: sessionId,
  frame_index: index,
  timestamp_ms: index * 333,
  split,
  width: 8,
  height: 6,
  image: `images/${split}/${frameId}.jpg`,
  lighting: 'day',
  context: '{"weather":"clear"}',
  pii_audited: true,
  pii_faces: 0,
  pii_plates: 0,
  objects: 0,
});

const LONG_PATH = `labels/train/${'l'.repeat(70)}/${'n'.repeat(60)}.txt`;

/** A commit with real files: annotations, a datasheet, images of two splits, a label under a path over 100 bytes. */
async function makeCommit(name: string, opts: { sessionIds?: string[]; trainFrames?: number } = {}) {
  const session = opts.sessionIds?.[0] ?? randomUUID();
  const train = Array.from({ length: opts.trainFrames ?? 3 }, () => randomUUID());
  const val = [randomUUID()];
  const files: Record<string, Buffer | string> = {
    'annotations/instances_train.json': JSON.stringify({ images: train.map((id) => ({ file_name: id })) }),
    'datasheet.md': `# ${name}\n`,
    [LONG_PATH]: '0 0.5 0.5 0.1 0.1\n',
  };
  for (const [i, id] of [...train, ...val].entries())
    files[`images/${i < train.length ? 'train' : 'val'}/${id}.jpg`] = await jpeg(i * 40);
  const commit = await createCommitFixture(ctx.api.deps, {
    name,
    sessionIds: opts.sessionIds,
    frames: [
      ...train.map((id, i) => frameRow(id, session, 'train', i)),
      frameRow(val[0]!, session, 'val', train.length),
    ],
    objects: [
      { object_id: randomUUID(), class_name: 'car', frame_id: train[0], session_id: session, x1: 1, x2: 4 },
      {
        object_id: randomUUID(),
        class_name: 'person',
        frame_id: train[0],
        session_id: session,
        attrs: '{"occluded":"no"}',
      },
      {
        object_id: randomUUID(),
        class_name: 'car',
        frame_id: train[2],
        session_id: session,
        polyline: '[[1,2,3,4]]',
      },
      { object_id: randomUUID(), class_name: 'car', frame_id: val[0], session_id: session, split: 'val' },
    ],
    files,
  });
  prefixes.push(commit.prefix);
  return { commit, train, val, files: filesOf(commit) };
}

const filesOf = (c: DatasetCommit) =>
  c.files as unknown as Array<{ path: string; sha256: string; size: number }>;

async function fetchBytes(
  path: string,
  opts: { token?: string; headers?: Record<string, string>; method?: string } = {},
) {
  const res = await fetch(`${ctx.api.url}${path}`, {
    method: opts.method ?? 'GET',
    headers: { authorization: `Bearer ${opts.token ?? ctx.token.reviewer}`, ...opts.headers },
  });
  return { res, body: Buffer.from(await res.arrayBuffer()) };
}

const putStored = (commit: DatasetCommit, path: string, bytes: Buffer) =>
  ctx.api.deps.storage.client.putObject(
    ctx.api.deps.storage.bucket('exports'),
    `${commit.prefix}${path}`,
    bytes,
    bytes.length,
  );

async function untar(archive: Buffer) {
  const extractor = tar.extract();
  Readable.from([archive]).pipe(extractor);
  const entries: Array<{ header: tar.Header; body: Buffer }> = [];
  for await (const entry of extractor) {
    const parts: Buffer[] = [];
    for await (const chunk of entry as AsyncIterable<Buffer>) parts.push(chunk);
    entries.push({ header: entry.header, body: Buffer.concat(parts) });
  }
  return entries;
}

const UNKNOWN_COMMIT = 'f'.repeat(64);

describe('GET /api/export/{commit_id}/certificate', () => {
  it('answers the signed body, its signature and the public key, which verify independently', async () => {
    const { commit, files } = await makeCommit('cert-ok');
    const res = await ctx.api.call('GET', `/api/export/${commit.commitId}/certificate`, {
      token: ctx.token.reviewer,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      commit_id: commit.commitId,
      algorithm: 'Ed25519',
      key_id: commit.keyId,
    });
    expect(res.body.certificate).toMatchObject({
      kind: 'drivelab.dataset-certificate/v1',
      commit_id: commit.commitId,
      name: 'cert-ok',
      version: 1,
      gate: { mode: 'advisory', outcome: 'passed' },
    });
    expect(res.body.certificate.files).toEqual(files);
    const signed = Buffer.from(canonicalize(res.body.certificate)!, 'utf8');
    const signature = Buffer.from(res.body.signature, 'base64');
    expect(verify(null, signed, res.body.public_key_pem, signature)).toBe(true);
    const altered = Buffer.from(canonicalize({ ...res.body.certificate, version: 2 })!, 'utf8');
    expect(verify(null, altered, res.body.public_key_pem, signature)).toBe(false);
  });

  it('404 for an unknown commit, 422 for a malformed id, 403 below reviewer', async () => {
    const call = (id: string, token = ctx.token.reviewer) =>
      ctx.api.call('GET', `/api/export/${id}/certificate`, { token });
    expect((await call(UNKNOWN_COMMIT)).status).toBe(404);
    const bad = await call('ABC');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('path.commit_id');
    expect((await call(UNKNOWN_COMMIT, ctx.token.annotator)).status).toBe(403);
  });
});

describe('GET /api/release/{commit_id}/verify', () => {
  const check = (c: DatasetCommit) =>
    ctx.api.call('GET', `/api/release/${c.commitId}/verify`, { token: ctx.token.reviewer });

  it('a commit as written is valid: every file re-hashed, manifest and signature hold', async () => {
    const { commit, files } = await makeCommit('verify-ok');
    const res = await check(commit);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      commit_id: commit.commitId,
      valid: true,
      files_total: files.length,
      files_checked: files.length,
      bytes_checked: files.reduce((s, f) => s + f.size, 0),
      mismatches: [],
      signature: 'valid',
      signature_valid: true,
      manifest_valid: true,
      manifest_problems: [],
    });
    expect(Date.parse(res.body.checked_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a tampered file fails it, named with what was expected and found', async () => {
    const { commit, files } = await makeCommit('verify-tampered');
    const target = files.find((f) => f.path === 'datasheet.md')!;
    const forged = Buffer.from('# forged\n'.padEnd(target.size, ' '));
    await putStored(commit, target.path, forged);
    const truncated = files.find((f) => f.path.startsWith('images/val/'))!;
    await putStored(commit, truncated.path, Buffer.from('short'));
    const removed = files.find((f) => f.path === LONG_PATH)!;
    await ctx.api.deps.storage.client.removeObject(
      ctx.api.deps.storage.bucket('exports'),
      `${commit.prefix}${removed.path}`,
    );

    const res = await check(commit);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.files_checked).toBe(files.length);
    expect(res.body.signature_valid).toBe(true);
    expect(res.body.manifest_valid).toBe(true);
    expect(res.body.mismatches).toEqual(
      [
        { path: target.path, reason: 'sha256', expected: target.sha256, actual: sha(forged) },
        { path: truncated.path, reason: 'size', expected: truncated.size, actual: 5 },
        { path: removed.path, reason: 'missing', expected: removed.sha256, actual: null },
      ].sort((a, b) => (a.path < b.path ? -1 : 1)),
    );
  });

  it('a file list changed in the database no longer matches the manifest or the certificate', async () => {
    const { commit, files } = await makeCommit('verify-row');
    const edited = files.map((f) => (f.path === 'datasheet.md' ? { ...f, sha256: '0'.repeat(64) } : f));
    await ctx.api.deps.db.datasetCommit.update({
      where: { commitId: commit.commitId },
      data: { files: edited },
    });
    const res = await check(commit);
    expect(res.body.valid).toBe(false);
    expect(res.body.manifest_valid).toBe(false);
    expect(res.body.manifest_problems.join('\n')).toMatch(/hashes to [0-9a-f]{64}/);
    expect(res.body.manifest_problems.join('\n')).toMatch(/differs from the certificate's/);
    expect(res.body.mismatches).toEqual([
      { path: 'datasheet.md', reason: 'sha256', expected: '0'.repeat(64), actual: expect.any(String) },
    ]);
  });

  it('a forged signature is invalid; a key other than the configured one is unknown_key', async () => {
    const forged = (await makeCommit('verify-signature')).commit;
    const other = Buffer.from(forged.signature, 'base64');
    other[0] = other[0]! ^ 0xff;
    await ctx.api.deps.db.datasetCommit.update({
      where: { commitId: forged.commitId },
      data: { signature: other.toString('base64') },
    });
    expect((await check(forged)).body).toMatchObject({
      valid: false,
      signature: 'invalid',
      signature_valid: false,
    });

    const rotated = (await makeCommit('verify-rotated')).commit;
    await ctx.api.deps.db.datasetCommit.update({
      where: { commitId: rotated.commitId },
      data: { keyId: 'ed25519:0000000000000000' },
    });
    const res = await check(rotated);
    expect(res.body).toMatchObject({ valid: false, signature: 'unknown_key', signature_valid: false });
    const cert = await ctx.api.call('GET', `/api/export/${rotated.commitId}/certificate`, {
      token: ctx.token.reviewer,
    });
    expect(cert.body.public_key_pem).toBeNull();
  });

  it('404 for an unknown commit', async () => {
    const res = await ctx.api.call('GET', `/api/release/${UNKNOWN_COMMIT}/verify`, {
      token: ctx.token.reviewer,
    });
    expect(res.status).toBe(404);
  });
});

describe('GET /api/release/registry', () => {
  it('lists every commit newest first, paged, with sizes, object counts and the gate', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await makeCommit('registry-set')).commit);
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/api/release/registry?name=registry-set&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await ctx.api.call('GET', q, { token: ctx.token.reviewer });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items);
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen.map((c) => c.commit_id)).toEqual(made.map((c) => c.commitId).reverse());
    expect(seen.map((c) => c.version)).toEqual([3, 2, 1]);
    const newest = made[2]!;
    expect(seen[0]).toEqual({
      commit_id: newest.commitId,
      name: 'registry-set',
      version: 3,
      parent_id: made[1]!.commitId,
      created_at: newest.createdAt.toISOString(),
      key_id: newest.keyId,
      files: filesOf(newest).length,
      bytes: filesOf(newest).reduce((s, f) => s + f.size, 0),
      objects: 4,
      gate_mode: 'advisory',
      gate_outcome: 'passed',
      certificate: `/api/export/${newest.commitId}/certificate`,
      verify: `/api/release/${newest.commitId}/verify`,
    });

    const all = await ctx.api.call('GET', '/api/release/registry?limit=200', { token: ctx.token.reviewer });
    const times = all.body.items.map((c: { created_at: string }) => Date.parse(c.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.body.items.length).toBeGreaterThan(3);
  });

  it('refuses a cursor it did not issue, and callers below reviewer', async () => {
    const bad = await ctx.api.call('GET', '/api/release/registry?cursor=nonsense', {
      token: ctx.token.reviewer,
    });
    expect(bad.status).toBe(422);
    expect((await ctx.api.call('GET', '/api/release/registry', { token: ctx.token.annotator })).status).toBe(
      403,
    );
  });
});

describe('GET /api/release/gold/{gold_id}/lineage', () => {
  it("follows a gold set's objects to frames, sessions and the commits that contain those sessions", async () => {
    const { db } = ctx.api.deps;
    const a1 = await createFrame(ctx.api.deps, { width: 64, height: 48 });
    const a2 = await createFrame(ctx.api.deps, { width: 64, height: 48, sessionId: a1.sessionId });
    const b1 = await createFrame(ctx.api.deps, { width: 64, height: 48 });
    const object = (frameId: string) =>
      db.annoObject.create({
        data: { frameId, bbox: [1, 1, 5, 5], classId: 1, source: 'human', state: 'accepted' },
      });
    const objects = [
      await object(a1.frame.id),
      await object(a1.frame.id),
      await object(a2.frame.id),
      await object(b1.frame.id),
    ];
    const deleted = await object(b1.frame.id);
    await db.annoObject.delete({ where: { id: deleted.id } });
    const gold = await db.goldSet.create({
      data: {
        name: 'gold-lineage',
        objectIds: [...objects.map((o) => o.id), deleted.id, 'not-a-uuid'],
        sealedAt: new Date(),
      },
    });
    const onlyA = (await makeCommit('gold-a', { sessionIds: [a1.sessionId] })).commit;
    const unrelated = (await makeCommit('gold-none', { sessionIds: [randomUUID()] })).commit;
    const both = (await makeCommit('gold-both', { sessionIds: [a1.sessionId, b1.sessionId, randomUUID()] }))
      .commit;

    const res = await ctx.api.call('GET', `/api/release/gold/${gold.id}/lineage`, {
      token: ctx.token.annotator,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      gold_id: gold.id,
      name: 'gold-lineage',
      sealed_at: gold.sealedAt!.toISOString(),
      objects: { total: 6, found: 4, missing: 2 },
    });
    expect(res.body.frame_ids).toEqual([a1.frame.id, a2.frame.id, b1.frame.id].sort());
    expect(res.body.sessions).toEqual(
      [
        { session_id: a1.sessionId, frames: 2, objects: 3 },
        { session_id: b1.sessionId, frames: 1, objects: 1 },
      ].sort((x, y) => (x.session_id < y.session_id ? -1 : 1)),
    );
    expect(res.body.commits.map((c: { commit_id: string }) => c.commit_id)).toEqual([
      both.commitId,
      onlyA.commitId,
    ]);
    expect(res.body.commits[0].sessions).toEqual([a1.sessionId, b1.sessionId].sort());
    expect(res.body.commits[1]).toMatchObject({ name: 'gold-a', version: 1, sessions: [a1.sessionId] });
    expect(res.body.commits.some((c: { commit_id: string }) => c.commit_id === unrelated.commitId)).toBe(
      false,
    );
  });

  it('404 for an unknown gold set, 422 for a malformed id', async () => {
    const call = (id: string) =>
      ctx.api.call('GET', `/api/release/gold/${id}/lineage`, { token: ctx.token.annotator });
    expect((await call(randomUUID())).status).toBe(404);
    expect((await call('nope')).status).toBe(422);
  });
});

describe('GET /api/datasets/{commit_id}/download', () => {
  let commit: DatasetCommit;
  let files: Array<{ path: string; sha256: string; size: number }>;
  let full: Buffer;
  let contents: Record<string, Buffer>;
  const url = () => `/api/datasets/${commit.commitId}/download`;

  beforeAll(async () => {
    ({ commit, files } = await makeCommit('download-set'));
    const { res, body } = await fetchBytes(url());
    expect(res.status).toBe(200);
    full = body;
    contents = {};
    for (const f of files) {
      const stream = await ctx.api.deps.storage.client.getObject(
        ctx.api.deps.storage.bucket('exports'),
        `${commit.prefix}${f.path}`,
      );
      const parts: Buffer[] = [];
      for await (const c of stream) parts.push(c as Buffer);
      contents[f.path] = Buffer.concat(parts);
    }
  });

  it('is a ustar archive of every file in file-list order, mode 0644, owned by 0, stamped with the commit time', async () => {
    const { res } = await fetchBytes(url(), { method: 'HEAD' });
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(res.headers.get('etag')).toBe(`"${commit.commitId}"`);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(Number(res.headers.get('content-length'))).toBe(full.length);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="download-set-v1.tar"');

    const entries = await untar(full);
    expect(entries.map((e) => e.header.name)).toEqual(files.map((f) => f.path));
    expect(entries.map((e) => e.header.name)).toContain(LONG_PATH);
    for (const [i, { header, body }] of entries.entries()) {
      expect(sha(body)).toBe(files[i]!.sha256);
      expect(header).toMatchObject({ mode: 0o644, uid: 0, gid: 0, uname: '', gname: '', type: 'file' });
      expect(header.mtime!.getTime()).toBe(Math.floor(commit.createdAt.getTime() / 1000) * 1000);
    }
    const { body: again } = await fetchBytes(url());
    expect(again.equals(full)).toBe(true);
  });

  it('a download resumed with Range, appended to its first part, is the archive byte for byte', async () => {
    for (const cut of [1, 511, 512, 700, Math.floor(full.length / 2), full.length - 1030, full.length - 1]) {
      const { res, body } = await fetchBytes(url(), { headers: { range: `bytes=${cut}-` } });
      expect(res.status).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${cut}-${full.length - 1}/${full.length}`);
      expect(Number(res.headers.get('content-length'))).toBe(full.length - cut);
      expect(Buffer.concat([full.subarray(0, cut), body]).equals(full)).toBe(true);
    }
    const { res, body } = await fetchBytes(url(), { headers: { range: 'bytes=600-2999' } });
    expect(res.status).toBe(206);
    expect(body.equals(full.subarray(600, 3000))).toBe(true);
  });

  it('honours If-Range: a stale validator gets the whole archive', async () => {
    const fresh = await fetchBytes(url(), {
      headers: { range: 'bytes=10-', 'if-range': `"${commit.commitId}"` },
    });
    expect(fresh.res.status).toBe(206);
    const stale = await fetchBytes(url(), {
      headers: { range: 'bytes=10-', 'if-range': '"something-else"' },
    });
    expect(stale.res.status).toBe(200);
    expect(stale.body.equals(full)).toBe(true);
  });

  it('416 for a range outside the archive', async () => {
    const { res, body } = await fetchBytes(url(), { headers: { range: `bytes=${full.length}-` } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${full.length}`);
    expect(JSON.parse(body.toString()).status).toBe(416);
  });

  it('is cut short rather than deliver a file that no longer matches its record', async () => {
    const { commit: other, files: otherFiles } = await makeCommit('download-tampered');
    const target = otherFiles.find((f) => f.path === 'datasheet.md')!;
    await putStored(other, target.path, Buffer.from('X'.repeat(target.size)));
    const res = await fetch(`${ctx.api.url}/api/datasets/${other.commitId}/download`, {
      headers: { authorization: `Bearer ${ctx.token.reviewer}` },
    });
    expect(res.status).toBe(200);
    const declared = Number(res.headers.get('content-length'));
    const received = await res.arrayBuffer().then(
      (b) => b.byteLength,
      () => -1,
    );
    expect(received).not.toBe(declared);
  });

  it('404 for an unknown commit, 403 below reviewer', async () => {
    expect((await fetchBytes(`/api/datasets/${UNKNOWN_COMMIT}/download`)).res.status).toBe(404);
    expect((await fetchBytes(url(), { token: ctx.token.annotator })).res.status).toBe(403);
  });

  it('blob: one file with its content type, length and SHA-256 ETag; ranges too', async () => {
    const blob = (path: string, headers: Record<string, string> = {}) =>
      fetchBytes(`/api/datasets/blob?commit_id=${commit.commitId}&path=${encodeURIComponent(path)}`, {
        headers,
        token: ctx.token.annotator,
      });
    const types: Record<string, string> = {
      'annotations/instances_train.json': 'application/json; charset=utf-8',
      'datasheet.md': 'text/markdown; charset=utf-8',
      [LONG_PATH]: 'text/plain; charset=utf-8',
      'parquet/objects/part-00000.parquet': 'application/vnd.apache.parquet',
      [files.find((f) => f.path.startsWith('images/'))!.path]: 'image/jpeg',
    };
    for (const [path, type] of Object.entries(types)) {
      const file = files.find((f) => f.path === path)!;
      const { res, body } = await blob(path);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({
        path,
        status: 200,
        type,
      });
      expect(res.headers.get('etag')).toBe(`"${file.sha256}"`);
      expect(Number(res.headers.get('content-length'))).toBe(file.size);
      expect(body.equals(contents[path]!)).toBe(true);
    }
    const part = await blob('annotations/instances_train.json', { range: 'bytes=2-9' });
    expect(part.res.status).toBe(206);
    expect(part.body.equals(contents['annotations/instances_train.json']!.subarray(2, 10))).toBe(true);
  });

  it('blob: only paths of the file list, never a key beside or above the commit', async () => {
    const other = (await makeCommit('blob-neighbour')).commit;
    const escape = `../${other.prefix.split('/').slice(1).join('/')}datasheet.md`;
    for (const path of [
      'nope.json',
      'images/../datasheet.md',
      escape,
      '/datasheet.md',
      'shards/train-000000.tar',
    ]) {
      const res = await ctx.api.call(
        'GET',
        `/api/datasets/blob?commit_id=${commit.commitId}&path=${encodeURIComponent(path)}`,
        { token: ctx.token.annotator },
      );
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    const res = await ctx.api.call('GET', `/api/datasets/blob?commit_id=${commit.commitId}`, {
      token: ctx.token.annotator,
    });
    expect(res.status).toBe(422);
  });
});

describe('POST /api/datasets/shards', () => {
  const shard = (body: Record<string, unknown>, token = ctx.token.reviewer) =>
    ctx.api.call('POST', '/api/datasets/shards', { token, body });
  const storedShard = async (c: DatasetCommit, path: string) => {
    const stream = await ctx.api.deps.storage.client.getObject(
      ctx.api.deps.storage.bucket('exports'),
      `${c.prefix}${path}`,
    );
    const parts: Buffer[] = [];
    for await (const chunk of stream) parts.push(chunk as Buffer);
    return Buffer.concat(parts);
  };
  const exists = (c: DatasetCommit, path: string) =>
    ctx.api.deps.storage.client.statObject(ctx.api.deps.storage.bucket('exports'), `${c.prefix}${path}`).then(
      () => true,
      () => false,
    );
  const recorded = async (c: DatasetCommit) =>
    (await ctx.api.deps.db.datasetCommit.findUniqueOrThrow({ where: { commitId: c.commitId } }))
      .shards as any[];

  it('writes WebDataset shards of a split: per frame its image and a JSON of the frame and its objects', async () => {
    const { commit, train, files } = await makeCommit('shards-set');
    const res = await shard({ commit_id: commit.commitId, samples_per_shard: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      commit_id: commit.commitId,
      split: 'train',
      samples_per_shard: 2,
      samples: 3,
    });
    expect(res.body.shards.map((s: any) => [s.path, s.samples])).toEqual([
      ['shards/train-000000.tar', 2],
      ['shards/train-000001.tar', 1],
    ]);
    expect(await recorded(commit)).toEqual(res.body.shards);

    const order = files.filter((f) => f.path.startsWith('images/train/'));
    const entries = [];
    for (const s of res.body.shards) {
      const bytes = await storedShard(commit, s.path);
      expect({ sha256: sha(bytes), size: bytes.length }).toEqual({ sha256: s.sha256, size: s.size });
      entries.push(...(await untar(bytes)));
    }
    const ids = order.map((f) => f.path.slice('images/train/'.length, -4));
    expect(entries.map((e) => e.header.name)).toEqual(ids.flatMap((id) => [`${id}.jpg`, `${id}.json`]));
    for (const [i, f] of order.entries()) expect(sha(entries[2 * i]!.body)).toBe(f.sha256);
    const docs = Object.fromEntries(
      entries
        .filter((e) => e.header.name.endsWith('.json'))
        .map((e) => [e.header.name.slice(0, -5), JSON.parse(e.body.toString())]),
    );
    expect(docs[train[0]!]).toMatchObject({
      commit_id: commit.commitId,
      frame_id: train[0],
      split: 'train',
      width: 8,
      height: 6,
      lighting: 'day',
      context: { weather: 'clear' },
    });
    expect(docs[train[0]!].objects.map((o: any) => o.class_name).sort()).toEqual(['car', 'person']);
    const car = docs[train[0]!].objects.find((o: any) => o.class_name === 'car');
    expect(car).toMatchObject({ bbox: [1, 0, 4, 10], attrs: {}, state: 'accepted' });
    expect(docs[train[0]!].objects.find((o: any) => o.class_name === 'person').attrs).toEqual({
      occluded: 'no',
    });
    expect(docs[train[1]!].objects).toEqual([]);
    expect(docs[train[2]!].objects[0].polyline).toEqual([[1, 2, 3, 4]]);

    // Writing again with a larger shard size replaces the split's shards and removes the surplus one.
    const again = await shard({ commit_id: commit.commitId, samples_per_shard: 5 });
    expect(again.status).toBe(201);
    expect(again.body.shards).toHaveLength(1);
    expect(await exists(commit, 'shards/train-000001.tar')).toBe(false);
    const val = await shard({ commit_id: commit.commitId, split: 'val' });
    expect(val.status).toBe(201);
    expect((await recorded(commit)).map((s) => s.path)).toEqual([
      'shards/train-000000.tar',
      'shards/val-000000.tar',
    ]);
    // Deterministic: the same commit, split and size give the same bytes.
    const third = await shard({ commit_id: commit.commitId, samples_per_shard: 5 });
    expect(third.body.shards[0].sha256).toBe(again.body.shards[0].sha256);
    // Shards are not commit files.
    const blob = await ctx.api.call(
      'GET',
      `/api/datasets/blob?commit_id=${commit.commitId}&path=shards/train-000000.tar`,
      { token: ctx.token.reviewer },
    );
    expect(blob.status).toBe(404);
  });

  it('refuses a split without images and bad bodies, writing nothing', async () => {
    const { commit } = await makeCommit('shards-refused');
    const none = await shard({ commit_id: commit.commitId, split: 'test' });
    expect(none.status).toBe(422);
    expect(none.body.detail).toMatch(/no images for split 'test'/);
    expect((await shard({ commit_id: commit.commitId, samples_per_shard: 0 })).status).toBe(422);
    expect((await shard({ commit_id: commit.commitId, split: '../x' })).status).toBe(422);
    expect((await shard({ commit_id: UNKNOWN_COMMIT })).status).toBe(404);
    expect((await shard({ commit_id: commit.commitId }, ctx.token.annotator)).status).toBe(403);
    expect(await recorded(commit)).toEqual([]);
    expect(await exists(commit, 'shards/test-000000.tar')).toBe(false);
  });

  it('a stored image that no longer matches its record fails the write and leaves no shard of the split', async () => {
    const { commit, files } = await makeCommit('shards-tampered', { trainFrames: 4 });
    expect((await shard({ commit_id: commit.commitId, samples_per_shard: 2 })).status).toBe(201);
    const last = files.filter((f) => f.path.startsWith('images/train/')).at(-1)!;
    await putStored(commit, last.path, Buffer.alloc(last.size, 1));
    const res = await shard({ commit_id: commit.commitId, samples_per_shard: 2 });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain(last.path);
    expect(await recorded(commit)).toEqual([]);
    expect(await exists(commit, 'shards/train-000000.tar')).toBe(false);
    expect(await exists(commit, 'shards/train-000001.tar')).toBe(false);
  });

  it('one writer per commit and split: a second one is a conflict', async () => {
    const { commit } = await makeCommit('shards-locked');
    await ctx.api.deps.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`shards:${commit.commitId}:train`}))`;
      const res = await shard({ commit_id: commit.commitId });
      expect(res.status).toBe(409);
      expect((await shard({ commit_id: commit.commitId, split: 'val' })).status).toBe(201);
    });
    expect((await shard({ commit_id: commit.commitId })).status).toBe(201);
  });
});
