// Workflows of the crypto domain (re-exported by ./index).
export {};
