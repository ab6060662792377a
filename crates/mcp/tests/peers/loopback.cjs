// Preloaded into server-everything's HTTP modes by sidewire-mcp's peer tests (`node --require`):
// its servers listen on a bare port, which means every interface; this makes a bare-port
// listen bind 127.0.0.1 only, so a test server is never reachable from the network.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const bare = (typeof args[0] === "number" || typeof args[0] === "string") &&
    (args.length < 2 || typeof args[1] === "function");
  if (bare) {
    args.splice(0, 1, Number(args[0]), "127.0.0.1");
  }
  return listen.apply(this, args);
};
