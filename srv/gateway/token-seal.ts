import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/**
 * The tokens the gateway holds at remote products, sealed at rest with AES-256-GCM under a key
 * derived from GATEWAY_REMOTE_GRANT_SECRET and bound to what the token is for (a key and a
 * product, say): a sealed token opens only for that, and only under the same secret.
 */
export class TokenSeal {
  private readonly secret: string

  constructor(secret: string) {
    this.secret = secret
  }

  seal(boundTo: string, token: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.keyFor(boundTo), iv)
    const sealed = Buffer.concat([iv, cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `v1.${sealed.toString('base64')}`
  }

  /** The token, or undefined when it was sealed for something else or under another secret. */
  open(boundTo: string, sealed: string): string | undefined {
    if (!sealed.startsWith('v1.')) return undefined
    const bytes = Buffer.from(sealed.slice(3), 'base64')
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.keyFor(boundTo), bytes.subarray(0, 12))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }

  private keyFor(boundTo: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.secret, 'remote-grant-token', boundTo, 32))
  }
}
