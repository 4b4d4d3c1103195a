#!/usr/bin/env python3
"""The ZeroMQ baseline of `meshbench suite` (scripts/bench): pyzmq PUSH/PULL over tcp://127.0.0.1.

  bench-zmq.py pull COUNT SIZE       bind PULL on a free port, print {"port": N}, receive COUNT
                                     messages, print one result line (the same fields as a
                                     meshbench source's SourceResult)
  bench-zmq.py push PORT COUNT SIZE  connect PUSH, send COUNT messages of SIZE bytes, wait until
                                     they are all handed to the kernel (linger) and exit

The measurement follows ../shared/bench-anchors/zmq_bench.py (pull/push roles, the receiver's
clock from the first message to the last, zero-copy receive for large messages); the port, the
result's shape and the one-message case are ours. Exits with status 3 when pyzmq is missing.
"""
import json
import sys
import time

try:
    import zmq
except ImportError:
    print("bench-zmq.py: pyzmq is not installed (python3 -m pip install pyzmq)", file=sys.stderr)
    sys.exit(3)


def pull(count, size):
    context = zmq.Context()
    socket = context.socket(zmq.PULL)
    port = socket.bind_to_random_port("tcp://127.0.0.1")
    print(json.dumps({"port": port}), flush=True)
    received = len(socket.recv(copy=size < 65536))
    start = time.perf_counter()
    for _ in range(count - 1):
        received += len(socket.recv(copy=size < 65536))
    seconds = time.perf_counter() - start
    # The clock starts at the first message, so COUNT - 1 messages are timed (none with one).
    timed = count - 1
    rate = timed / seconds if timed > 0 and seconds > 0 else 0.0
    print(json.dumps({"workload": "push-pull", "transport": "zeromq", "messages": count, "bytesPerMessage": size,
                      "seconds": seconds, "messagesPerSecond": rate, "gbitPerSecond": rate * size * 8 / 1e9,
                      "messagesReceived": None if received == count * size else received // max(size, 1)}),
          flush=True)
    socket.close(linger=0)
    context.term()


def push(port, count, size):
    context = zmq.Context()
    socket = context.socket(zmq.PUSH)
    socket.connect("tcp://127.0.0.1:%d" % port)
    message = b"z" * size
    for _ in range(count):
        socket.send(message, copy=size < 65536)
    socket.close(linger=-1)
    context.term()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "pull":
        pull(int(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "push":
        push(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
