// snarkjs and circomlibjs ship no type declarations; their call sites type what they use.
declare module "snarkjs";
declare module "circom_runtime";
declare module "circomlibjs";
