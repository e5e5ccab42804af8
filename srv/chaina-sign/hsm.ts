import cds from '@sap/cds'
import { HsmConfigurations } from '#cds-models/chainasign'
import { chainA } from '../chains/chain-a/index.ts'
import { networkIdOf } from '../chains/chain-a/identifiers.ts'
import { HsmSigner } from '../chains/chain-a/signing/hsm.ts'
import { isApiError } from '../lib/errors.ts'
import { hsmConfig, hsmLabel } from './hsm-settings.ts'
import { createSigningRequest, requestRow } from './requests.ts'
import { recordSignature } from './signatures.ts'
import { SignerType, SigningStatus } from './states.ts'

/**
 * Signing with the configured PKCS#11 key (HSM_* environment variables, else
 * `cds.requires['chain-a'].hsm`; the PIN only from the environment). The token signs the body hash;
 * the key never leaves it. Only users with the configured role may sign, and no product grant may
 * (SignWithHsm is `@gateway.closed`).
 */

const { DELETE, UPSERT } = cds.ql

let current: { config: string; signer: HsmSigner } | undefined

/** The signer for the configuration in force (a changed configuration gets a new signer). */
function hsmSigner(): HsmSigner {
  const config = hsmConfig()
  const key = JSON.stringify(config ?? null)
  if (current?.config !== key) {
    void current?.signer.close()
    current = { config: key, signer: new HsmSigner(config) }
  }
  return current.signer
}

export async function closeHsmSigner() {
  const closing = current
  current = undefined
  await closing?.signer.close()
}

/** Signs the build's transaction in the token, in a new or the open `hsm` request; answers the request (verified, or failed with why). */
export async function signWithHsm(req: cds.Request, buildId: unknown, signerInfo?: string | null): Promise<string> {
  const signer = hsmSigner()
  signer.assertMayUse(role => req.user.is(role))
  const config = hsmConfig()!
  const id = await createSigningRequest(req, { buildId: buildId as string, signerType: SignerType.hsm, signerInfo: signerInfo ?? `hsm ${config.keyLabel ?? config.keyId}` })
  const request = await requestRow(id)
  if (request.status === SigningStatus.verified) return id
  const signed = await signer.sign(request.unsignedTxCbor)
  await recordSignature(req, request, signed, {
    signerDetails: { keyLabel: config.keyLabel ?? null, keyId: config.keyId ?? null, publicKeyHash: signer.publicKey().hash().to_hex() },
  })
  return id
}

/** HsmConfigurations answers what is configured now, and whether the token answers. */
export async function refreshHsmConfigurations() {
  const label = hsmLabel()
  const checkedAt = new Date().toISOString()
  let row: Record<string, unknown> | undefined
  try {
    const config = hsmConfig()
    if (config) {
      const network = (await chainA()).networkName
      const status = hsmSigner().status(networkIdOf(network))
      row = {
        label, modulePath: config.modulePath, slot: 'index' in config.slot ? `index ${config.slot.index}` : `id ${config.slot.id}`,
        keyLabel: config.keyLabel ?? null, keyId: config.keyId ?? null, requiredRole: config.requiredRole,
        status: status.connected ? 'connected' : 'unavailable', publicKeyHash: status.publicKeyHash ?? null, address: status.address ?? null, network,
        errorCode: status.error?.code ?? null, errorMessage: status.error?.message.slice(0, 500) ?? null, checkedAt,
      }
    }
  } catch (error) {
    if (!isApiError(error)) throw error
    row = { label, status: 'misconfigured', errorCode: error.code, errorMessage: error.message.slice(0, 500), checkedAt }
  }
  if (!row) return DELETE.from(HsmConfigurations)
  await DELETE.from(HsmConfigurations).where({ label: { '!=': label } })
  await UPSERT.into(HsmConfigurations).entries(row)
}
