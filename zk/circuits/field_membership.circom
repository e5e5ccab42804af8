pragma circom 2.1.0;

include "content.circom";

// A text field of an anchored document is one of the members of a public set root (up to 64
// members, set leaf = Poseidon(member digest)), without revealing which.
template FieldMembership() {
    signal input payload;
    signal input root;
    signal input attester;
    signal input fieldKey;
    signal input setRoot;

    signal input value;
    signal input salt;
    signal input siblings[4];
    signal input dirs[4];
    signal input setSiblings[6];
    signal input setDirs[6];

    component leaf = Leaf();
    leaf.key <== fieldKey;
    leaf.kind <== 1;
    leaf.scale <== 0;
    leaf.value <== value;
    leaf.salt <== salt;
    component path = PathRoot(4);
    path.leaf <== leaf.out;
    path.siblings <== siblings;
    path.dirs <== dirs;
    path.root === root;

    component member = Poseidon(1);
    member.inputs[0] <== value;
    component setPath = PathRoot(6);
    setPath.leaf <== member.out;
    setPath.siblings <== setSiblings;
    setPath.dirs <== setDirs;
    setPath.root === setRoot;

    component bindPayload = Bind();
    bindPayload.in <== payload;
    component bindAttester = Bind();
    bindAttester.in <== attester;
}

component main { public [payload, root, attester, fieldKey, setRoot] } = FieldMembership();
