using { chainb as db } from '../../db/chain-b-vault';

/**
 * The attestations' records as the verify lane needs them: what the chain does not carry in its
 * state (an attestation's proof and claim). Internal: served over no protocol, so no HTTP caller
 * (and no gateway route) reaches it; any attestation, whoever made it.
 */
@protocol: 'none'
service ChainBAttestationRecords {

  @readonly entity Attestations as projection on db.Attestations {
    ID, kind, circuitId, payloadHash, payloadHashB, attesterId, claim, proof, publicSignals, status
  };
}
