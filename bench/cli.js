// The bench scripts' command lines: one way to fail with the usage (exit 2), to read an integer
// flag, and to walk the arguments.
'use strict';

function cli(name, usage) {
  const fail = (message) => {
    console.error(`${name}: ${message}`);
    process.exit(2);
  };
  const count = (flag, v, min) => {
    if (v === undefined || !/^\d+$/.test(v) || Number(v) < min)
      fail(`${flag} needs an integer >= ${min}\n${usage}`);
    return Number(v);
  };
  // handle(flag, next) for every argument, next() giving the flag's value; a flag handle does not
  // take (returns false) is an error, as is -h/--help, which prints the usage and exits 0.
  const walk = (argv, handle) => {
    for (let i = 0; i < argv.length; ++i) {
      const a = argv[i];
      const next = () => {
        if (i + 1 >= argv.length) fail(`${a} needs a value\n${usage}`);
        return argv[++i];
      };
      if (a === '-h' || a === '--help') {
        console.log(usage);
        process.exit(0);
      }
      if (!handle(a, next)) fail(`unknown argument '${a}'\n${usage}`);
    }
  };
  return {fail, count, walk};
}

module.exports = {cli};
