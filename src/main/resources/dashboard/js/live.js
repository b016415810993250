// The cluster's facts, pushed: the SockJS event-bus bridge at /eventbus, spoken over its raw WebSocket
// (/eventbus/websocket, the bridge's JSON frames without SockJS's framing), so the page needs no client library.
// An admin key may listen to the facts every node publishes (BridgeRules); nothing is sent but registrations
// and pings.
export const ADDRESSES = ['conveyor.tx.completed', 'conveyor.node.died', 'conveyor.lease.changed', 'conveyor.events'];

/**
 * Connects and keeps connecting (1 s, doubling to 30 s, after a drop); onFact(address, body) for each fact,
 * onState(live, why) when the connection comes or goes. Returns {close()}.
 */
export function connect(apiKey, onFact, onState) {
  let ws = null;
  let ping = null;
  let closed = false;
  let delay = 1000;
  function open() {
    ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/eventbus/websocket');
    ws.onopen = () => {
      delay = 1000;
      ADDRESSES.forEach(address => ws.send(JSON.stringify({ type: 'register', address, headers: { apiKey } })));
      // the bridge drops a socket it has not heard from for 10 s
      ping = setInterval(() => ws.send('{"type":"ping"}'), 5000);
      onState(true);
    };
    // the raw WebSocket sends the bridge's frames as binary messages
    ws.binaryType = 'arraybuffer';
    ws.onmessage = (m) => {
      let frame;
      try {
        frame = JSON.parse(typeof m.data === 'string' ? m.data : new TextDecoder().decode(m.data));
      } catch (e) {
        return;
      }
      if (frame.type === 'rec') {
        onFact(frame.address, frame.body);
      } else if (frame.type === 'err') {
        onState(false, frame.message || frame.body || 'refused');
        closed = true; // a refused key is not retried; the page polls instead
        ws.close();
      }
    };
    ws.onclose = () => {
      clearInterval(ping);
      if (closed) { return; }
      onState(false, 'disconnected; trying again in ' + delay / 1000 + ' s');
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  open();
  return { close() { closed = true; if (ws) { ws.close(); } } };
}
