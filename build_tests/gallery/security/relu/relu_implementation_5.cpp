// Attack: a child that outlives the call. Wrong (returns its input), and each call forks a child
// that sleeps, then tries to overwrite results files and reach the network. The child is in the
// worker's PID namespace, which ends with the worker; the file system is read-only and the
// network namespace is empty.
// expect-failure: (values differ beyond|is constant)
#include <ATen/ATen.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

namespace {

void phone_home() {
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(47113);  // security_gallery.py listens here, outside the sandbox
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (sock >= 0 && connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    const char message[] = "a kernel reached the network\n";
    (void)!write(sock, message, sizeof(message) - 1);
  }
  if (sock >= 0) close(sock);
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  phone_home();
  if (fork() == 0) {
    sleep(2);
    phone_home();
    std::ofstream("/tmp/written_by_a_kernel_child.txt") << "late\n";
    _exit(0);
  }
  return self.clone();
}
