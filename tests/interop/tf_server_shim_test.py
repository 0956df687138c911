"""The TensorFlow-server shim (tf_server_shim.py) in CI: a TF1 test file of
our own, written the way TensorFlow's distributed tests are (tf.test.TestCase,
tf.distribute.Server, tf.test.create_local_cluster), runs through the shim
against `weft server` processes and must pass:
  - one local server: a session runs a step; an isolated session
    (isolate_session_state) does not see a variable another session set,
  - a local cluster of 2 workers and 1 ps: a variable on the ps, updated by
    both workers' sessions,
  - a step blocked on a queue ends, when its session closes, with
    TensorFlow's "Session::Close" wording;
and a kernel-test-style file (self.cached_session(), self.evaluate() in
graph mode) runs through the shim's --sessions mode, its sessions on a
weft server: values, and an op's error as TensorFlow's exception class.
TensorFlow's own test files are run the same way by hand (doc/testing.md:
"TensorFlow's distributed tests"); their code never enters this repository.

usage: tf_server_shim_test.py PATH_TO_WEFT
Prints 'SKIPPED: ...' and exits 0 when TensorFlow is not installed.
"""
import os
import subprocess
import sys
import tempfile

try:
    import tensorflow  # noqa: F401
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: tensorflow not installed ({e})")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tf_compare import check, summary_exit_code  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WEFT = os.path.abspath(sys.argv[1])

TEST_FILE = '''
import threading
import time
import numpy as np
import tensorflow as tf
tf1 = tf.compat.v1


class ShimTest(tf.test.TestCase):

  def testLocalServerRunsAStepAndIsolatesASession(self):
    server = tf.distribute.Server.create_local_server()
    with tf1.Graph().as_default():
      v = tf1.Variable([1.0, 2.0], name="v")
      doubled = v * 2.0
      with tf1.Session(server.target) as sess:
        sess.run(v.initializer)
        self.assertAllEqual([2.0, 4.0], sess.run(doubled))
      config = tf1.ConfigProto(isolate_session_state=True)
      with tf1.Session(server.target, config=config) as isolated:
        with self.assertRaises(tf.errors.FailedPreconditionError):
          isolated.run(doubled)

  def testClusterWithAParameterServer(self):
    workers, _ = tf.test.create_local_cluster(num_workers=2, num_ps=1)
    with tf1.Graph().as_default():
      with tf1.device("/job:ps/task:0"):
        w = tf1.Variable(np.float32(0.0), name="w")
      add = tf1.assign_add(w, 1.0)
      with tf1.Session(workers[0].target) as first:
        first.run(w.initializer)
        first.run(add)
      with tf1.Session(workers[1].target) as second:
        self.assertEqual(2.0, second.run(add))

  def testCloseCancelsABlockedStep(self):
    server = tf.distribute.Server.create_local_server()
    with tf1.Graph().as_default():
      queue = tf1.FIFOQueue(10, [tf.float32])
      dequeue = queue.dequeue()
      sess = tf1.Session(server.target)
      errors = []
      def run():
        try:
          sess.run(dequeue)
        except tf.errors.OpError as e:
          errors.append(e)
      thread = threading.Thread(target=run)
      thread.start()
      time.sleep(1.0)
      sess.close()
      thread.join(60)
      self.assertEqual(1, len(errors))
      self.assertIsInstance(errors[0], tf.errors.CancelledError)
      self.assertIn("Session::Close", errors[0].message)


if __name__ == "__main__":
  tf.test.main()
'''

SESSIONS_FILE = '''
import tensorflow as tf
tf1 = tf.compat.v1


class KernelStyleTest(tf.test.TestCase):

  def testEvaluateRunsOnAWeftServer(self):
    with self.cached_session() as sess:
      self.assertTrue(tf.compat.as_str(sess.sess_str).startswith("grpc://"), sess.sess_str)
      x = tf1.constant([[1.0, 2.0], [3.0, 4.0]])
      self.assertAllClose([[7.0, 10.0], [15.0, 22.0]], self.evaluate(tf.matmul(x, x)))

  def testAnOpErrorIsTensorFlowsException(self):
    with self.cached_session():
      with self.assertRaises(tf.errors.InvalidArgumentError):
        self.evaluate(tf.gather(tf1.constant([1, 2, 3]), tf1.constant(7)))


if __name__ == "__main__":
  tf.test.main()
'''


def run_shim(work, name, text, flags):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ, WEFT_BIN=WEFT)
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "tf_server_shim.py")] + flags + [path],
        capture_output=True, text=True, timeout=600, env=env)
    return proc, proc.stdout + proc.stderr


def main():
    with tempfile.TemporaryDirectory(prefix="weft_shim_test_") as work:
        proc, out = run_shim(work, "shim_selftest.py", TEST_FILE, ["--v1"])
        for name in ("testLocalServerRunsAStepAndIsolatesASession",
                     "testClusterWithAParameterServer",
                     "testCloseCancelsABlockedStep"):
            check(f"through the shim on weft servers: {name}",
                  f"RESULT ShimTest.{name} PASS" in out, out[-3000:])
        check("the shim reports success", proc.returncode == 0, out[-1500:])
        proc, out = run_shim(work, "shim_sessions_selftest.py", SESSIONS_FILE,
                             ["--v1", "--sessions"])
        for name in ("testEvaluateRunsOnAWeftServer", "testAnOpErrorIsTensorFlowsException"):
            check(f"--sessions, test sessions on a weft server: {name}",
                  f"RESULT KernelStyleTest.{name} PASS" in out, out[-3000:])
        check("the shim reports success with --sessions", proc.returncode == 0, out[-1500:])
    return summary_exit_code()


if __name__ == "__main__":
    sys.exit(main())
