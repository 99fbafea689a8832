/* BAD (order): provisioning is enabled before the node is initialized with its composition. */
#include <zephyr/kernel.h>
#include <zephyr/bluetooth/bluetooth.h>
#include <zephyr/bluetooth/mesh.h>

static const uint8_t uuid[16] = { 0xdd, 0xdd };

static const struct bt_mesh_model models[] = {
	BT_MESH_MODEL_CFG_SRV,
};

static const struct bt_mesh_elem elements[] = {
	BT_MESH_ELEM(0, models, BT_MESH_MODEL_NONE),
};

static const struct bt_mesh_comp comp = {
	.cid = BT_COMP_ID_LF,
	.elem = elements,
	.elem_count = ARRAY_SIZE(elements),
};

static const struct bt_mesh_prov prov = {
	.uuid = uuid,
};

int main(void)
{
	int err = bt_enable(NULL);

	if (err < 0) {
		return err;
	}
	err = bt_mesh_prov_enable(BT_MESH_PROV_ADV); /* expect: E_CALL_ORDER */
	if (err < 0) {
		return err;
	}
	return bt_mesh_init(&prov, &comp);
}
