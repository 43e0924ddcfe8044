# mpi4py_ring.py - mpi4py (built with MPICC=ampicc) under ampirun: import,
# MPI_Init_thread with MPI_THREAD_MULTIPLE, a ring of pickled objects and of
# a buffer on the main thread while a second Python thread receives on
# another tag (mpi4py drops the GIL in blocking calls), then the last rank
# ends with sys.exit(argv[1]) (default 0), which must become the job's
# status.
import sys
import threading

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size
errors = []

if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
    errors.append(f"thread level {MPI.Query_thread()}, expected MPI_THREAD_MULTIPLE")


def worker():
    for i in range(50):
        got = comm.recv(source=left, tag=2)
        if got != ("worker", left, i):
            errors.append(f"worker got {got!r}")


t = threading.Thread(target=worker)
t.start()
for i in range(50):
    comm.send(("worker", rank, i), dest=right, tag=2)
got = comm.sendrecv(("ring", rank), dest=right, sendtag=1, source=left, recvtag=1)
if got != ("ring", left):
    errors.append(f"ring got {got!r}")
buf = bytearray(1000)
comm.Sendrecv(bytes([rank % 256]) * 1000, dest=right, sendtag=3, recvbuf=buf, source=left, recvtag=3)
if buf != bytes([left % 256]) * 1000:
    errors.append("buffer ring: wrong bytes")
t.join()
total = comm.allreduce(len(errors))
for e in errors:
    print(f"FAIL rank {rank}: {e}", flush=True)
if total == 0:
    print(f"mpi4py_ring: rank {rank} of {size} OK", flush=True)
if total:
    sys.exit(1)
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 and rank == size - 1 else 0)
