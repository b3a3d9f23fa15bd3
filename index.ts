// The Pi package's entry for a path or git install of this checkout (`pi install ./clone`, the
// root package.json's `pi.extensions`). Pi lists an extension at startup after the folder of its
// entry file (an `index.ts` names its folder), so the entry sits at the checkout's root, named as
// the clone is (`pi-context-decisions`), not in `extension/` (which Pi listed as "extension").
// The npm package puts extension/index.ts itself at its root.
export { default } from "./extension/index.ts";
