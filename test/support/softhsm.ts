import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as pkcs11js from 'pkcs11js'
import { CKK_EC_EDWARDS, CKM_EC_EDWARDS_KEY_PAIR_GEN, ed25519Point } from '../../srv/chains/chain-a/signing/hsm.ts'
import { defaultExport } from '../../srv/lib/interop.ts'

/**
 * A private SoftHSM2 token for tests: its own configuration and token directory (SOFTHSM2_CONF
 * points there while it lives), initialised with softhsm2-util. Ed25519 keys are generated inside
 * the token, the private half sensitive and not extractable, like an administrator would on an HSM.
 */

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so'

const pkcs11 = defaultExport<typeof pkcs11js>(pkcs11js)
const ED25519_PARAMS = Buffer.from('06032b6570', 'hex') // OID 1.3.101.112

export interface SoftHsmToken {
  dir: string
  tokenLabel: string
  pin: string
  /** The slot id SoftHSM assigned to the token (decimal). */
  slotId: string
  /** Removes the token directory and restores SOFTHSM2_CONF. */
  cleanup(): void
}

export function createSoftHsmToken(tokenLabel = 'signing-test', pin = '246810', soPin = '13579135'): SoftHsmToken {
  const dir = mkdtempSync(join(tmpdir(), 'softhsm-'))
  const confPath = join(dir, 'softhsm2.conf')
  mkdirSync(join(dir, 'tokens'))
  writeFileSync(confPath, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`)
  const previous = process.env.SOFTHSM2_CONF
  process.env.SOFTHSM2_CONF = confPath
  const output = execFileSync('softhsm2-util', ['--init-token', '--free', '--label', tokenLabel, '--so-pin', soPin, '--pin', pin], { encoding: 'utf8' })
  const slotId = /reassigned to slot (\d+)/.exec(output)?.[1]
  if (!slotId) throw new Error(`softhsm2-util did not say which slot holds the token: ${output}`)
  return {
    dir, tokenLabel, pin, slotId,
    cleanup() {
      if (previous === undefined) delete process.env.SOFTHSM2_CONF
      else process.env.SOFTHSM2_CONF = previous
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Generates an Ed25519 key pair in the token (CKM_EC_EDWARDS_KEY_PAIR_GEN); answers the raw public key. */
export function generateEd25519KeyPair(token: SoftHsmToken, label: string, id: string): Buffer {
  return withUserSession(token, (lib, session) => {
    const common = [
      { type: pkcs11.CKA_TOKEN, value: true },
      { type: pkcs11.CKA_LABEL, value: label },
      { type: pkcs11.CKA_ID, value: Buffer.from(id, 'hex') },
    ]
    const { publicKey } = lib.C_GenerateKeyPair(session, { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
      [...common, { type: pkcs11.CKA_EC_PARAMS, value: ED25519_PARAMS }, { type: pkcs11.CKA_VERIFY, value: true }],
      [...common, { type: pkcs11.CKA_PRIVATE, value: true }, { type: pkcs11.CKA_SIGN, value: true }, { type: pkcs11.CKA_SENSITIVE, value: true }, { type: pkcs11.CKA_EXTRACTABLE, value: false }])
    const [point] = lib.C_GetAttributeValue(session, publicKey, [{ type: pkcs11.CKA_EC_POINT }])
    return Buffer.from(ed25519Point(point.value)!)
  })
}

/** What the token says about a private key: its protection flags, and whether its value can be read. */
export function inspectPrivateKey(token: SoftHsmToken, label: string): { keyType: number; sensitive: boolean; extractable: boolean; valueReadable: boolean } {
  return withUserSession(token, (lib, session) => {
    lib.C_FindObjectsInit(session, [{ type: pkcs11.CKA_CLASS, value: pkcs11.CKO_PRIVATE_KEY }, { type: pkcs11.CKA_LABEL, value: label }])
    const [key] = lib.C_FindObjects(session, 1)
    lib.C_FindObjectsFinal(session)
    const [keyType, sensitive, extractable] = lib.C_GetAttributeValue(session, key, [
      { type: pkcs11.CKA_KEY_TYPE }, { type: pkcs11.CKA_SENSITIVE }, { type: pkcs11.CKA_EXTRACTABLE },
    ])
    let valueReadable = true
    try {
      lib.C_GetAttributeValue(session, key, [{ type: pkcs11.CKA_VALUE }])
    } catch {
      valueReadable = false
    }
    return { keyType: keyType.value.readUIntLE(0, keyType.value.length), sensitive: sensitive.value[0] === 1, extractable: extractable.value[0] === 1, valueReadable }
  })
}

export { CKK_EC_EDWARDS }

/** Runs `work` in a logged-in read-write session, then finalises the module again. */
function withUserSession<T>(token: SoftHsmToken, work: (lib: pkcs11js.PKCS11, session: Buffer) => T): T {
  const lib = new pkcs11.PKCS11()
  lib.load(SOFTHSM_MODULE)
  lib.C_Initialize()
  try {
    const slot = lib.C_GetSlotList(true).find(handle => handle.readBigUInt64LE(0) === BigInt(token.slotId))!
    const session = lib.C_OpenSession(slot, pkcs11.CKF_SERIAL_SESSION | pkcs11.CKF_RW_SESSION)
    lib.C_Login(session, pkcs11.CKU_USER, token.pin)
    try {
      return work(lib, session)
    } finally {
      lib.C_Logout(session)
      lib.C_CloseSession(session)
    }
  } finally {
    lib.C_Finalize()
    lib.close()
  }
}
