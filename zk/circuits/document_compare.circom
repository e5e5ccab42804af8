pragma circom 2.1.0;

include "content.circom";

// Two anchored documents with aligned slots (the same field key in each slot):
// mode 0 (integrity): every slot whose bit in mask is 0 holds the same kind, scale and value in both;
// mode 1 (diff): at least k slots differ in kind, scale or value.
// Both openings (every slot's key, kind, scale, value and salt) stay hidden.
template DocumentCompare() {
    signal input payloadA;
    signal input rootA;
    signal input payloadB;
    signal input rootB;
    signal input attester;
    signal input mode;
    signal input mask;
    signal input k;

    signal input keys[16];
    signal input kindA[16];
    signal input scaleA[16];
    signal input valueA[16];
    signal input saltA[16];
    signal input kindB[16];
    signal input scaleB[16];
    signal input valueB[16];
    signal input saltB[16];

    component leafA[16];
    component leafB[16];
    component treeA = TreeRoot();
    component treeB = TreeRoot();
    for (var i = 0; i < 16; i++) {
        leafA[i] = Leaf();
        leafA[i].key <== keys[i];
        leafA[i].kind <== kindA[i];
        leafA[i].scale <== scaleA[i];
        leafA[i].value <== valueA[i];
        leafA[i].salt <== saltA[i];
        treeA.leaves[i] <== leafA[i].out;
        leafB[i] = Leaf();
        leafB[i].key <== keys[i];
        leafB[i].kind <== kindB[i];
        leafB[i].scale <== scaleB[i];
        leafB[i].value <== valueB[i];
        leafB[i].salt <== saltB[i];
        treeB.leaves[i] <== leafB[i].out;
    }
    treeA.root === rootA;
    treeB.root === rootB;

    mode * (1 - mode) === 0;
    component maskBits = Num2Bits(16);
    maskBits.in <== mask;
    component kBits = Num2Bits(5);
    kBits.in <== k;

    component sameKind[16];
    component sameScale[16];
    component sameValue[16];
    signal sameKindScale[16];
    signal same[16];
    signal fixed[16];
    var differing = 0;
    for (var i = 0; i < 16; i++) {
        sameKind[i] = IsEqual();
        sameKind[i].in[0] <== kindA[i];
        sameKind[i].in[1] <== kindB[i];
        sameScale[i] = IsEqual();
        sameScale[i].in[0] <== scaleA[i];
        sameScale[i].in[1] <== scaleB[i];
        sameValue[i] = IsEqual();
        sameValue[i].in[0] <== valueA[i];
        sameValue[i].in[1] <== valueB[i];
        sameKindScale[i] <== sameKind[i].out * sameScale[i].out;
        same[i] <== sameKindScale[i] * sameValue[i].out;
        // integrity: a slot outside the mask may not differ
        fixed[i] <== (1 - mode) * (1 - maskBits.out[i]);
        fixed[i] * (1 - same[i]) === 0;
        differing += 1 - same[i];
    }
    component enough = GreaterEqThan(6);
    enough.in[0] <== differing;
    enough.in[1] <== k;
    mode * (1 - enough.out) === 0;

    component bindPayloadA = Bind();
    bindPayloadA.in <== payloadA;
    component bindPayloadB = Bind();
    bindPayloadB.in <== payloadB;
    component bindAttester = Bind();
    bindAttester.in <== attester;
}

component main { public [payloadA, rootA, payloadB, rootB, attester, mode, mask, k] } = DocumentCompare();
