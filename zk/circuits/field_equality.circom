pragma circom 2.1.0;

include "content.circom";

// A text field of an anchored document is the preimage of a public digest (the field element of
// its SHA-256); the salt and the field's place in the document stay hidden.
template FieldEquality() {
    signal input payload;
    signal input root;
    signal input attester;
    signal input fieldKey;
    signal input expected;

    signal input salt;
    signal input siblings[4];
    signal input dirs[4];

    component leaf = Leaf();
    leaf.key <== fieldKey;
    leaf.kind <== 1;
    leaf.scale <== 0;
    leaf.value <== expected;
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

component main { public [payload, root, attester, fieldKey, expected] } = FieldEquality();
