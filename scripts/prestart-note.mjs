import process from 'node:process';

// `npm start` builds first (prestart); tsc and vite print nothing while they
// work, so say what the wait is for.
process.stderr.write(
  'Building Reception before it starts: TypeScript into dist/ and the web page into web/dist ' +
    '(about 20 to 60 s; it prints nothing meanwhile). Then it starts and prints the address of its page.\n',
);
