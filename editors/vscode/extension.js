// Starts `seqc lsp` for JSON documents. The server itself decides, by content, which of them
// are tool sequences: every other JSON file (package.json, tsconfig.json...) gets nothing from it.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('seqc').get('path', 'seqc');
  const serverOptions = { command, args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'json' },
      { scheme: 'untitled', language: 'json' },
    ],
  };
  client = new LanguageClient('seqc', 'seqc', serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand('seqc.restart', () => client.restart()),
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
