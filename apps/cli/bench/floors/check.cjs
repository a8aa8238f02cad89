// The floor of `wf check`: start Node, load the @babel/parser the contract uses (argv[2]) with
// Node's own loader, parse the file (argv[3]) as the contract does, print one line. Nothing of @wf.
const { readFileSync } = require('node:fs');
const { parse } = require(process.argv[2]);
const ast = parse(readFileSync(process.argv[3], 'utf8'), {
  sourceType: 'script',
  strictMode: true,
  errorRecovery: false,
  attachComment: false,
});
process.stdout.write(`${process.argv[3]}: ${ast.program.body.length} statement(s)\n`);
