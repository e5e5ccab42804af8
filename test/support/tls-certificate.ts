import { generateKeyPairSync, sign } from 'node:crypto'

/**
 * A self-signed TLS certificate for 127.0.0.1 (P-256, one day), made with node:crypto alone: a
 * test's HTTPS server presents it, and a spawned process trusts it through NODE_EXTRA_CA_CERTS.
 */
export function selfSignedCertificate(): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const now = Date.now()
  const name = sequence(set(sequence(oid('2.5.4.3'), der(0x0c, Buffer.from('127.0.0.1')))))
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'))
  const subjectAltName = sequence(oid('2.5.29.17'), der(0x04, sequence(der(0x87, Buffer.from([127, 0, 0, 1])))))
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, Buffer.from([1])),
    ecdsaWithSha256,
    name,
    sequence(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, sequence(subjectAltName)),
  )
  const signature = sign('sha256', tbs, privateKey)
  const certificate = sequence(tbs, ecdsaWithSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])))
  const pem = `-----BEGIN CERTIFICATE-----\n${certificate.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`
  return { cert: pem, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string }
}

function der(tag: number, content: Buffer): Buffer {
  const length = content.length
  const header = length < 0x80 ? [length] : length < 0x100 ? [0x81, length] : [0x82, length >> 8, length & 0xff]
  return Buffer.concat([Buffer.from([tag, ...header]), content])
}

const sequence = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts))
const set = (...parts: Buffer[]) => der(0x31, Buffer.concat(parts))
const utcTime = (date: Date) => der(0x17, Buffer.from(date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z'))

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number)
  const bytes = [first * 40 + second]
  for (const arc of rest) {
    const base128 = [arc & 0x7f]
    for (let value = arc >> 7; value > 0; value >>= 7) base128.unshift((value & 0x7f) | 0x80)
    bytes.push(...base128)
  }
  return der(0x06, Buffer.from(bytes))
}
