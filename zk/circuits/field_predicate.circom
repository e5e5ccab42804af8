pragma circom 2.1.0;

include "content.circom";

// A whole-number field of an anchored document compares to a public threshold, its value hidden.
// op: 0 value <= threshold, 1 value >= threshold, 2 value < threshold, 3 value > threshold.
template FieldPredicate() {
    signal input payload;
    signal input root;
    signal input attester;
    signal input fieldKey;
    signal input scale;
    signal input threshold;
    signal input op;

    signal input value;
    signal input salt;
    signal input siblings[4];
    signal input dirs[4];

    component valueBits = Num2Bits(64);
    valueBits.in <== value;
    component thresholdBits = Num2Bits(64);
    thresholdBits.in <== threshold;

    component less = LessThan(64);
    less.in[0] <== value;
    less.in[1] <== threshold;
    component equal = IsEqual();
    equal.in[0] <== value;
    equal.in[1] <== threshold;
    signal greater <== 1 - less.out - equal.out;

    component isOp[4];
    for (var i = 0; i < 4; i++) {
        isOp[i] = IsEqual();
        isOp[i].in[0] <== op;
        isOp[i].in[1] <== i;
    }
    isOp[0].out + isOp[1].out + isOp[2].out + isOp[3].out === 1;
    signal holds[4];
    holds[0] <== isOp[0].out * (less.out + equal.out);
    holds[1] <== isOp[1].out * (greater + equal.out);
    holds[2] <== isOp[2].out * less.out;
    holds[3] <== isOp[3].out * greater;
    holds[0] + holds[1] + holds[2] + holds[3] === 1;

    component leaf = Leaf();
    leaf.key <== fieldKey;
    leaf.kind <== 0;
    leaf.scale <== scale;
    leaf.value <== value;
    leaf.salt <== salt;
    component path = PathRoot(4);
    path.leaf <== leaf.out;
    path.siblings <== siblings;
    path.dirs <== dirs;
    path.root === root;

    component bindPayload = Bind();
    bindPayload.in <== payload;
    component bindAttester = Bind();
    bindAttester.in <== attester;
}

component main { public [payload, root, attester, fieldKey, scale, threshold, op] } = FieldPredicate();
