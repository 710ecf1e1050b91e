// Integration tests start processes and servers; give them room (unit tests keep jest's 5 s).
jest.setTimeout(120_000);
