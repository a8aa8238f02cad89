// The one shape of a validation finding, shared by every validator of the contract.

/** One reason a document or call was refused: where (`manifest.maxAgents`, `args.scopes[2]`) and what. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}
