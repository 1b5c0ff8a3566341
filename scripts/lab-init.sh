#!/bin/busybox sh
# /init of the lab initramfs: load what reaches the 9p share, build the
# overlay root, then hand over to lab-guest.sh inside it.
/bin/busybox mkdir -p /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

fail() { echo "lab-init: $*" >/dev/console; poweroff -f; }
param() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" /proc/cmdline; }

for m in $(cat /boot-modules/order); do
	insmod "/boot-modules/$m" || fail "insmod $m failed"
done
kver=$(cat /kver)
cache=$(param lab.cache)

mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /lower || fail "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot || fail "cannot mount the overlay root"

# The kernel's module autoload runs this initramfs's /sbin/modprobe, the
# chroot's modprobe reads its own /lib/modules: both see the shared tree.
mkdir -p /lib/modules/$kver /newroot/lib/modules/$kver
mount -o bind /lower$cache/kernel/lib/modules/$kver /lib/modules/$kver || fail "no module tree at $cache/kernel"
mount -o bind /lib/modules/$kver /newroot/lib/modules/$kver

mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
# /tmp stays the overlay's: the host's checkout may live under /tmp.
mkdir -p /newroot/dev/pts /newroot/dev/shm /newroot/run /newroot/lab-out
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/run
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 labout /newroot/lab-out || fail "cannot mount the output share"
if grep -q labxchg /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag 2>/dev/null; then
	mkdir -p /newroot/lab-xchg
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 labxchg /newroot/lab-xchg
fi

chroot /newroot /bin/bash "$(param lab.guest)" >/dev/console 2>&1
sync
poweroff -f
