import { z } from 'zod';
import { commitIdSchema, findCommit } from '../../../activities/datasets/read';
import { createCertificateSigner } from '../../../activities/export/signing';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/**
 * A commit's certificate, in the `export` group (docs/datasets-release.md): the body exactly as it
 * was signed, its signature and the key, so a verifier outside the platform can check it with
 * nothing but the public key: the signed bytes are the RFC 8785 canonical JSON of `certificate`.
 */
export function createCertificateRoutes(deps: AppDeps): RouteGroup {
  const signer = createCertificateSigner(deps.config.export);
  return new RouteGroup('export').get(
    '/api/export/{commit_id}/certificate',
    {
      summary:
        "A commit's signed certificate: the body (SHA-256 and size of every file, counts, gate mode and outcome, who exported and when), its Ed25519 signature over the body's RFC 8785 canonical JSON, and the public key when it is the configured one",
      access: 'reviewer',
      params: z.object({ commit_id: commitIdSchema }),
      statuses: { 404: 'no such commit' },
    },
    async ({ params }) => {
      const commit = await findCommit(deps.db, params.commit_id);
      return {
        commit_id: commit.commitId,
        certificate: commit.certificate,
        signature: commit.signature,
        key_id: commit.keyId,
        algorithm: 'Ed25519',
        // Only the configured key's public half is known here; a commit signed before a key rotation says null.
        public_key_pem: commit.keyId === signer.keyId ? signer.publicKeyPem : null,
      };
    },
  );
}
