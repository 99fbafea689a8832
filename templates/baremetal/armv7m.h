/* ARMv7-M core peripherals (System Control Space), common to every Cortex-M3/M4/M7.
 * Addresses and layouts: ARMv7-M Architecture Reference Manual (ARM DDI 0403E) B3.2 System Control
 * Space, B3.3 SysTick, B3.4 NVIC; CPACR B3.2.20; HFSR B3.2.16. Shipped by rac-fw (not generated: the
 * architecture, not the SVD, defines them; Nordic's SVD omits them). Written for GCC 12 (C11). */
#ifndef RAC_ARMV7M_H
#define RAC_ARMV7M_H
#include <stdint.h>

typedef struct {
    volatile uint32_t CTRL;  /* 0x00 SYST_CSR: ENABLE bit0, TICKINT bit1, CLKSOURCE bit2, COUNTFLAG bit16 */
    volatile uint32_t LOAD;  /* 0x04 SYST_RVR: 24-bit reload */
    volatile uint32_t VAL;   /* 0x08 SYST_CVR */
    volatile uint32_t CALIB; /* 0x0C SYST_CALIB */
} SysTick_Type;

typedef struct {
    volatile uint32_t ISER[16]; /* 0x000 */
    uint32_t RESERVED0[16];
    volatile uint32_t ICER[16]; /* 0x080 */
    uint32_t RESERVED1[16];
    volatile uint32_t ISPR[16]; /* 0x100 */
    uint32_t RESERVED2[16];
    volatile uint32_t ICPR[16]; /* 0x180 */
    uint32_t RESERVED3[16];
    volatile uint32_t IABR[16]; /* 0x200 */
    uint32_t RESERVED4[48];
    volatile uint8_t IPR[496];  /* 0x300 */
} NVIC_Type;

typedef struct {
    volatile uint32_t CPUID; /* 0x00 */
    volatile uint32_t ICSR;  /* 0x04 */
    volatile uint32_t VTOR;  /* 0x08 */
    volatile uint32_t AIRCR; /* 0x0C */
    volatile uint32_t SCR;   /* 0x10 */
    volatile uint32_t CCR;   /* 0x14 */
    volatile uint8_t SHPR[12]; /* 0x18 */
    volatile uint32_t SHCSR; /* 0x24 */
    volatile uint32_t CFSR;  /* 0x28 */
    volatile uint32_t HFSR;  /* 0x2C */
    volatile uint32_t DFSR;  /* 0x30 */
    volatile uint32_t MMFAR; /* 0x34 */
    volatile uint32_t BFAR;  /* 0x38 */
    volatile uint32_t AFSR;  /* 0x3C */
    uint32_t RESERVED0[18];
    volatile uint32_t CPACR; /* 0x88 */
} SCB_Type;


#define SysTick ((SysTick_Type *)0xE000E010UL)
#define NVIC ((NVIC_Type *)0xE000E100UL)
#define SCB ((SCB_Type *)0xE000ED00UL)

#define SysTick_CTRL_ENABLE (1UL << 0)
#define SysTick_CTRL_TICKINT (1UL << 1)
#define SysTick_CTRL_CLKSOURCE (1UL << 2)
#define SCB_HFSR_DEBUGEVT (1UL << 31)
/* CP10 and CP11 full access: B3.2.20. */
#define SCB_CPACR_CP10_CP11_FULL (0xFUL << 20)

static inline void rac_nvic_enable(int irq, uint32_t priority, uint32_t priority_bits)
{
    NVIC->IPR[irq] = (uint8_t)(priority << (8U - priority_bits));
    NVIC->ISER[(uint32_t)irq >> 5] = 1UL << ((uint32_t)irq & 31U);
}

static inline void rac_irq_enable_all(void) { __asm__ volatile("cpsie i" ::: "memory"); }
/* PRIMASK critical section (B5.2.3 MRS/MSR, CPS): save, mask, and restore the caller's state, so sections nest. */
static inline uint32_t rac_irq_save(void)
{
    uint32_t primask;
    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
    return primask;
}
static inline void rac_irq_restore(uint32_t primask) { __asm__ volatile("msr primask, %0" : : "r"(primask) : "memory"); }
static inline void rac_dsb(void) { __asm__ volatile("dsb 0xF" ::: "memory"); }
static inline void rac_isb(void) { __asm__ volatile("isb 0xF" ::: "memory"); }

#endif
