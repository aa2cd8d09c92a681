import ctypes, time
libc = ctypes.CDLL(None)
libc.prctl(15, b"Web Content", 0, 0, 0)  # PR_SET_NAME
for _ in range(20):
    time.sleep(0.002)
libc.prctl(15, b"x [001] 1.0: y", 0, 0, 0)
for _ in range(5):
    time.sleep(0.002)
