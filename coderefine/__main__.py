from coderefine.cli.main import entry

entry()
